! hml.f90 - the hml runtime for Fortran: module `hml` over the C API
! (runtime/include/hml/*.h) through ISO_C_BINDING; see hml-fortran(3).
!
!     use hml
!     real(real64), allocatable, target :: u(:,:)      ! allocate(u(0:n+1, 0:n+1))
!     type(hml_region) :: r
!     st = hml_region_open(r, "heat_field")
!     st = hml_region_inout(r, "[0:n, 0:n] = ([1:n+1, 1:n+1])", "", &
!                           [hml_array_of(u, "u")], [hml_symbol("n", n)])
!     if (hml_region_begin(r) /= 0) call advance(u)   ! every call
!     st = hml_region_end(r)
!     call hml_region_free(r)
!
! Arrays are taken as they are, never copied: hml_array_of() describes a
! Fortran array to the runtime as the C array it is in memory. A Fortran
! array a(l1:u1, l2:u2) is column-major, so it is the C array
! a[u2-l2+1][u1-l1+1]: the shape is reversed, and a functor subscript
! [s2, s1] reads a(l1+s1, l2+s2). Functors and domains are written in C
! order over the reversed dims, each index counted from 0 at the array's
! lower bound (this is HDF5's own Fortran convention: what the runtime
! gathers and collects is the memory in its order, so h5py shows a
! Fortran-written field transposed, as it shows any HDF5 Fortran dataset).
! A slice that is contiguous (a(:, 2:5)) is described from its first
! element; one that is not (a(1:n:2, :), a(2:5, :) of a 2-D array) is
! refused with HML_EINVALID at the call that binds it, never copied,
! because the runtime reads and writes the memory long after the call.
! The array must therefore have the TARGET (or POINTER) attribute and
! outlive the region.
!
! Errors: every fallible function returns 0 or a negative HML_E* code;
! hml_error_message() is the one-line message of the last failure of this
! thread (the runtime's, or the module's own for what it refuses itself).
! The module never prints and never stops the program.
module hml
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use hml_c
  implicit none
  private
  public :: hml_region_stats   !< hml_region_stats of region.h (counters uint64_t there)

  integer, parameter, public :: HML_OK = 0, HML_ERROR = -1, HML_EINVALID = -2, &
    HML_ENOMEM = -3, HML_ENOTFOUND = -4, HML_EIO = -5, HML_ESHAPE = -6, &
    HML_ERANGE = -7, HML_ENOTSUPPORTED = -8, HML_EMODEL = -9, HML_ESYNTAX = -10, &
    HML_EEXISTS = -11, HML_ELOCKED = -12
  integer, parameter, public :: HML_MODE_DEFAULT = 0, HML_MODE_OFF = 1, &
    HML_MODE_COLLECT = 2, HML_MODE_INFER = 3, HML_MODE_INTERLEAVE = 4, HML_MODE_SHADOW = 5
  integer, parameter, public :: HML_ON_ERROR_DEFAULT = 0, HML_ON_ERROR_FALLBACK = 1, &
    HML_ON_ERROR_FAIL = 2
  integer, parameter, public :: HML_F32 = 1, HML_F64 = 2, HML_I32 = 3, HML_I64 = 4
  public :: HML_MAX_DIMS
  integer, parameter :: NAME_LEN = 63

  !> A region handle; free it with hml_region_free().
  type, public :: hml_region
    type(c_ptr) :: p = c_null_ptr
  end type

  !> A Fortran array described as its C view (hml_array_of()): borrowed.
  type, public :: hml_array
    character(len=NAME_LEN) :: name = ''
    type(c_ptr) :: data = c_null_ptr
    integer :: dtype = 0
    integer :: ndim = 0
    integer(int64) :: shape(HML_MAX_DIMS) = 0   !< C order: shape(1) is the last Fortran extent
    logical :: contiguous = .true.
  end type

  !> A value for a name of a functor or domain: hml_symbol("n", n).
  type, public :: hml_symbol
    character(len=NAME_LEN) :: name = ''
    integer(int64) :: value = 0
  end type

  ! The module's own last error (a refusal before the C API is called);
  ! code 0 means the C runtime's last error stands.
  integer :: f_code = 0
  character(len=:), allocatable :: f_message
  !$omp threadprivate(f_code, f_message)

  interface hml_array_of
    module procedure array_of_f64, array_of_f32, array_of_i32, array_of_i64
  end interface
  interface hml_qoi_write
    module procedure qoi_f64, qoi_f32, qoi_i32, qoi_i64
  end interface

  public :: hml_array_of, hml_qoi_write
  public :: hml_region_open, hml_region_free, hml_region_input, hml_region_output, &
    hml_region_inout, hml_region_begin, hml_region_begin_if, hml_region_end, &
    hml_region_flush, hml_region_mode, hml_mode_name, hml_region_stats_get, &
    hml_region_gather, hml_region_map_size, hml_region_set_data, hml_region_row_begin, &
    hml_region_row_end, hml_region_seek, hml_region_set_agree
  public :: hml_error_code, hml_error_message, hml_strerror, hml_version

contains

  ! --- strings and the module's own errors ---------------------------------

  ! Record a refusal of the module itself; returns `code`.
  function fail(code, message) result(rc)
    integer, intent(in) :: code
    character(len=*), intent(in) :: message
    integer :: rc
    f_code = code
    f_message = message
    rc = code
  end function

  function from_c(rc) result(r)
    integer(c_int), intent(in) :: rc
    integer :: r
    f_code = 0
    r = int(rc)
  end function

  !> The code of this thread's last failure (HML_OK when none).
  function hml_error_code() result(code)
    integer :: code
    type(c_error), pointer :: e
    if (f_code /= 0) then
      code = f_code
      return
    end if
    call c_f_pointer(c_error_last(), e)
    code = int(e%code)
  end function

  !> The one-line message of this thread's last failure ('' when none).
  function hml_error_message() result(msg)
    character(len=:), allocatable :: msg
    type(c_error), pointer :: e
    if (f_code /= 0) then
      msg = f_message
      return
    end if
    call c_f_pointer(c_error_last(), e)
    msg = fstr(e%message)
  end function

  !> A short description of an error code ("invalid argument", ...).
  function hml_strerror(code) result(s)
    integer, intent(in) :: code
    character(len=:), allocatable :: s
    s = fstr(c_strerror(int(code, c_int)))
  end function

  !> The version of the linked libhml, e.g. "0.1.0".
  function hml_version() result(s)
    character(len=:), allocatable :: s
    s = fstr(c_version())
  end function

  ! --- describing Fortran arrays ---------------------------------------------

  ! The C view of an array of rank `rnk` and extents `ext` (Fortran order):
  ! the extents reversed; a scalar is one element.
  function describe(dtype, name, rnk, ext, contig, p) result(d)
    integer, intent(in) :: dtype, rnk
    character(len=*), intent(in) :: name
    integer(int64), intent(in) :: ext(:)
    logical, intent(in) :: contig
    type(c_ptr), intent(in) :: p
    type(hml_array) :: d
    integer :: k
    d%name = name
    d%dtype = dtype
    d%contiguous = contig
    d%data = p
    d%ndim = max(rnk, 1)
    d%shape(1) = 1
    do k = 1, min(rnk, HML_MAX_DIMS)
      d%shape(k) = ext(rnk - k + 1)
    end do
  end function

  !> Describe `a` (any rank, kept in place; TARGET in the caller) to the
  !> runtime as the C array it is in memory: hml_array_of(u, "u").
  function array_of_f64(a, name) result(d)
    real(real64), target :: a(..)
    character(len=*), intent(in) :: name
    type(hml_array) :: d
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(a) .and. size(a) > 0) p = c_loc(a)
    d = describe(HML_F64, name, rank(a), shape(a, kind=int64), is_contiguous(a), p)
  end function

  function array_of_f32(a, name) result(d)
    real(real32), target :: a(..)
    character(len=*), intent(in) :: name
    type(hml_array) :: d
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(a) .and. size(a) > 0) p = c_loc(a)
    d = describe(HML_F32, name, rank(a), shape(a, kind=int64), is_contiguous(a), p)
  end function

  function array_of_i32(a, name) result(d)
    integer(int32), target :: a(..)
    character(len=*), intent(in) :: name
    type(hml_array) :: d
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(a) .and. size(a) > 0) p = c_loc(a)
    d = describe(HML_I32, name, rank(a), shape(a, kind=int64), is_contiguous(a), p)
  end function

  function array_of_i64(a, name) result(d)
    integer(int64), target :: a(..)
    character(len=*), intent(in) :: name
    type(hml_array) :: d
    type(c_ptr) :: p
    p = c_null_ptr
    if (is_contiguous(a) .and. size(a) > 0) p = c_loc(a)
    d = describe(HML_I64, name, rank(a), shape(a, kind=int64), is_contiguous(a), p)
  end function

  ! The module's refusals of a description, before the runtime sees it.
  function check_array(d, what) result(rc)
    type(hml_array), intent(in) :: d
    character(len=*), intent(in) :: what
    integer :: rc
    rc = HML_OK
    if (.not. d%contiguous) then
      rc = fail(HML_EINVALID, what // ": array '" // trim(d%name) // "' is not contiguous " // &
        "(a strided slice): hml binds Fortran arrays in place and never copies them; " // &
        "bind the whole array, a contiguous slice or a contiguous copy")
    else if (d%ndim > HML_MAX_DIMS) then
      rc = fail(HML_EINVALID, what // ": array '" // trim(d%name) // "' has more than 8 dimensions")
    end if
  end function

  ! A NUL-terminated copy of `s` as an array of c_char, for a C string that
  ! must have an address (c_loc).
  subroutine to_chars(s, c)
    character(len=*), intent(in) :: s
    character(kind=c_char), intent(out) :: c(:)
    integer :: i, n
    n = min(len_trim(s), size(c) - 1)
    do i = 1, n
      c(i) = s(i:i)
    end do
    c(n + 1) = c_null_char
  end subroutine

  ! hml_region_input/output/inout (which = 1, 2, 3) with the arrays and
  ! symbols turned into their C structs for the call.
  function bind_maps(which, r, functor, domain, arrays, symbols, what) result(rc)
    integer, intent(in) :: which
    type(hml_region), intent(in) :: r
    character(len=*), intent(in) :: functor, domain, what
    type(hml_array), intent(in) :: arrays(:)
    type(hml_symbol), intent(in), optional :: symbols(:)
    integer :: rc
    type(c_array), allocatable, target :: ca(:)
    type(c_symbol), allocatable, target :: cs(:)
    character(kind=c_char), allocatable, target :: an(:, :), sn(:, :), dom(:)
    type(c_ptr) :: pa, ps, pd
    integer :: k, ns

    ns = 0
    if (present(symbols)) ns = size(symbols)
    allocate(ca(size(arrays)), an(NAME_LEN + 1, size(arrays)), cs(ns), sn(NAME_LEN + 1, ns))
    allocate(dom(len(domain) + 1))
    do k = 1, size(arrays)
      rc = check_array(arrays(k), what)
      if (rc /= HML_OK) return
      call to_chars(arrays(k)%name, an(:, k))
      ca(k)%name = c_loc(an(1, k))
      ca(k)%data = arrays(k)%data
      ca(k)%dtype = int(arrays(k)%dtype, c_int)
      ca(k)%ndim = int(arrays(k)%ndim, c_int)
      ca(k)%shape = arrays(k)%shape
    end do
    do k = 1, ns
      call to_chars(symbols(k)%name, sn(:, k))
      cs(k)%name = c_loc(sn(1, k))
      cs(k)%value = symbols(k)%value
    end do
    call to_chars(domain, dom)
    pa = c_null_ptr
    ps = c_null_ptr
    pd = c_null_ptr
    if (size(arrays) > 0) pa = c_loc(ca)
    if (ns > 0) ps = c_loc(cs)
    if (len_trim(domain) > 0) pd = c_loc(dom)
    select case (which)
    case (1)
      rc = from_c(c_input(r%p, cstr(functor), pd, pa, size(ca, kind=c_size_t), ps, int(ns, c_size_t)))
    case (2)
      rc = from_c(c_output(r%p, cstr(functor), pd, pa, size(ca, kind=c_size_t), ps, int(ns, c_size_t)))
    case default
      rc = from_c(c_inout(r%p, cstr(functor), pd, pa, size(ca, kind=c_size_t), ps, int(ns, c_size_t)))
    end select
  end function

  ! --- regions ----------------------------------------------------------------

  !> Open the region `label` (hml_region_open()). The mode, the failure
  !> policy, the collection file and the model come from the environment
  !> unless given here. 0 or a negative code.
  function hml_region_open(r, label, mode, on_error, db, model) result(rc)
    type(hml_region), intent(inout) :: r
    character(len=*), intent(in) :: label
    integer, intent(in), optional :: mode, on_error
    character(len=*), intent(in), optional :: db, model
    integer :: rc
    type(c_options), target :: o
    character(kind=c_char), allocatable, target :: cdb(:), cmodel(:)

    if (present(mode)) o%mode = int(mode, c_int)
    if (present(on_error)) o%on_error = int(on_error, c_int)
    if (present(db)) then
      allocate(cdb(len(db) + 1))
      call to_chars(db, cdb)
      o%db = c_loc(cdb)
    end if
    if (present(model)) then
      allocate(cmodel(len(model) + 1))
      call to_chars(model, cmodel)
      o%model = c_loc(cmodel)
    end if
    rc = from_c(c_open(r%p, cstr(label), c_loc(o)))
  end function

  !> Flush and free the region (hml_region_free(); a freed or never
  !> opened handle is accepted).
  subroutine hml_region_free(r)
    type(hml_region), intent(inout) :: r
    call c_free(r%p)
    r%p = c_null_ptr
  end subroutine

  !> Bind `functor` over `domain` ('' for the largest valid one) to
  !> `arrays` (hml_array_of()) and add it as an input: the map's index
  !> (>= 0) or a negative code. Functor subscripts are in C order over the
  !> reversed dims, counted from each array's lower bound (module head).
  function hml_region_input(r, functor, domain, arrays, symbols) result(rc)
    type(hml_region), intent(in) :: r
    character(len=*), intent(in) :: functor, domain
    type(hml_array), intent(in) :: arrays(:)
    type(hml_symbol), intent(in), optional :: symbols(:)
    integer :: rc
    rc = bind_maps(1, r, functor, domain, arrays, symbols, "hml_region_input")
  end function

  !> hml_region_input() for an output map.
  function hml_region_output(r, functor, domain, arrays, symbols) result(rc)
    type(hml_region), intent(in) :: r
    character(len=*), intent(in) :: functor, domain
    type(hml_array), intent(in) :: arrays(:)
    type(hml_symbol), intent(in), optional :: symbols(:)
    integer :: rc
    rc = bind_maps(2, r, functor, domain, arrays, symbols, "hml_region_output")
  end function

  !> hml_region_input() for memory updated in place (an input and an
  !> output of the same arrays); 0 or a negative code.
  function hml_region_inout(r, functor, domain, arrays, symbols) result(rc)
    type(hml_region), intent(in) :: r
    character(len=*), intent(in) :: functor, domain
    type(hml_array), intent(in) :: arrays(:)
    type(hml_symbol), intent(in), optional :: symbols(:)
    integer :: rc
    rc = bind_maps(3, r, functor, domain, arrays, symbols, "hml_region_inout")
  end function

  !> Start a call: 1 run the original code, 0 the model wrote the outputs,
  !> negative on error (the original code must run then too):
  !> if (hml_region_begin(r) /= 0) call original(...)
  function hml_region_begin(r) result(rc)
    type(hml_region), intent(in) :: r
    integer :: rc
    rc = from_c(c_begin(r%p))
  end function

  !> hml_region_begin() that takes the original path when `run_original`.
  function hml_region_begin_if(r, run_original) result(rc)
    type(hml_region), intent(in) :: r
    logical, intent(in) :: run_original
    integer :: rc
    rc = from_c(c_begin_if(r%p, merge(1_c_int, 0_c_int, run_original)))
  end function

  !> Processes that must take one path (MPI ranks whose original code
  !> exchanges halos; hml_region_set_agree() in hml-runtime(3)): every
  !> call in infer and interleave mode calls `agree` once, collectively,
  !> with local = 1 when this process would run the original code; it must
  !> return nonzero when any process's local is. `agree` is c_funloc of
  !>   integer(c_int) function agree(local, ctx) bind(C)
  !>     integer(c_int), value :: local
  !>     type(c_ptr), value :: ctx
  !> (e.g. an MPI_Allreduce with MPI_LOR), c_null_funptr to remove it;
  !> `ctx` (optional) is passed on. 0 or a negative code.
  function hml_region_set_agree(r, agree, ctx) result(rc)
    type(hml_region), intent(in) :: r
    type(c_funptr), intent(in) :: agree
    type(c_ptr), intent(in), optional :: ctx
    integer :: rc
    type(c_ptr) :: c
    c = c_null_ptr
    if (present(ctx)) c = ctx
    rc = from_c(c_set_agree(r%p, agree, c))
  end function

  !> Finish a call: 0 or, under the fail policy, a negative code.
  function hml_region_end(r) result(rc)
    type(hml_region), intent(in) :: r
    integer :: rc
    rc = from_c(c_end(r%p))
  end function

  !> A row call (hml_region_row_begin()): the region in a loop body, any
  !> number of threads at once, `row` from 0 (the iteration's row of the
  !> maps' domain): 1 run the iteration, 0 the model wrote the row,
  !> negative on error. With `run_original`, the original path.
  function hml_region_row_begin(r, row, run_original) result(rc)
    type(hml_region), intent(in) :: r
    integer(int64), intent(in) :: row
    logical, intent(in), optional :: run_original
    integer :: rc
    integer(c_int) :: run
    run = 0
    if (present(run_original)) run = merge(1_c_int, 0_c_int, run_original)
    rc = from_c(c_row_begin_if(r%p, int(row, c_int64_t), run))
  end function

  !> Finish this thread's row call: 0 or a negative code.
  function hml_region_row_end(r) result(rc)
    type(hml_region), intent(in) :: r
    integer :: rc
    rc = from_c(c_row_end(r%p))
  end function

  !> Point every map `rows` rows (of each array's last Fortran dimension,
  !> the C view's first) past where it was bound (hml_region_seek()).
  function hml_region_seek(r, rows) result(rc)
    type(hml_region), intent(in) :: r
    integer(int64), intent(in) :: rows
    integer :: rc
    rc = from_c(c_seek(r%p, int(rows, c_int64_t)))
  end function

  !> Write buffered collected calls now: 0 or a negative code.
  function hml_region_flush(r) result(rc)
    type(hml_region), intent(in) :: r
    integer :: rc
    rc = from_c(c_flush(r%p))
  end function

  !> The mode in effect (HML_MODE_OFF, ...).
  function hml_region_mode(r) result(mode)
    type(hml_region), intent(in) :: r
    integer :: mode
    mode = int(c_mode(r%p))
  end function

  !> "off", "collect", "infer", "interleave", "shadow"; '' for others.
  function hml_mode_name(mode) result(s)
    integer, intent(in) :: mode
    character(len=:), allocatable :: s
    s = fstr(c_mode_name(int(mode, c_int)))
  end function

  !> The region's counters and timings: 0 or a negative code.
  function hml_region_stats_get(r, stats) result(rc)
    type(hml_region), intent(in) :: r
    type(hml_region_stats), intent(out) :: stats
    integer :: rc
    rc = from_c(c_stats(r%p, stats, c_sizeof(stats)))
  end function

  ! Map k (from 1) of the region: an output map when `output`.
  function region_map(r, k, output) result(m)
    type(hml_region), intent(in) :: r
    integer, intent(in) :: k
    logical, intent(in), optional :: output
    type(c_ptr) :: m
    m = c_null_ptr
    if (k < 1) return
    if (present(output)) then
      if (output) then
        m = c_output_map(r%p, int(k - 1, c_size_t))
        return
      end if
    end if
    m = c_input_map(r%p, int(k - 1, c_size_t))
  end function

  !> Rows and values per row of input map k (counted from 1; output map k
  !> when `output`): 0, or HML_ENOTFOUND when there is no such map.
  function hml_region_map_size(r, k, rows, row_size, output) result(rc)
    type(hml_region), intent(in) :: r
    integer, intent(in) :: k
    integer(int64), intent(out) :: rows, row_size
    logical, intent(in), optional :: output
    integer :: rc
    type(c_ptr) :: m
    rows = 0
    row_size = 0
    m = region_map(r, k, output)
    if (.not. c_associated(m)) then
      rc = fail(HML_ENOTFOUND, "hml_region_map_size: the region has no such map")
      return
    end if
    rows = c_tmap_rows(m)
    row_size = c_tmap_row_size(m)
    rc = from_c(0_c_int)
  end function

  !> What the model sees (hml_tmap_gather()): the values of map k, row by
  !> row, value r*row_size + c + 1 of `dst` for row r, value c (from 0).
  !> 0, HML_ENOTFOUND (no such map), HML_ESHAPE (`dst` too small).
  function hml_region_gather(r, k, dst, output) result(rc)
    type(hml_region), intent(in) :: r
    integer, intent(in) :: k
    real(real64), target, contiguous, intent(out) :: dst(:)
    logical, intent(in), optional :: output
    integer :: rc
    integer(int64) :: rows, row_size
    character(len=40) :: need
    rc = hml_region_map_size(r, k, rows, row_size, output)
    if (rc /= HML_OK) return
    if (size(dst, kind=int64) < rows * row_size) then
      write (need, '(i0, " values, it holds ", i0)') rows * row_size, size(dst, kind=int64)
      rc = fail(HML_ESHAPE, "hml_region_gather: the map gathers " // trim(need))
      return
    end if
    rc = from_c(c_tmap_gather(region_map(r, k, output), c_loc(dst), int(HML_F64, c_int), 0_c_int))
  end function

  !> Point array `piece` (from 1) of input map k (output map k when
  !> `output`) at `a`, an array of the same shape and type (double
  !> buffers swapped): 0, HML_ENOTFOUND, or HML_EINVALID for a strided
  !> slice.
  function hml_region_set_data(r, k, piece, a, output) result(rc)
    type(hml_region), intent(in) :: r
    integer, intent(in) :: k, piece
    type(hml_array), intent(in) :: a
    logical, intent(in), optional :: output
    integer :: rc
    type(c_ptr) :: m
    rc = check_array(a, "hml_region_set_data")
    if (rc /= HML_OK) return
    m = region_map(r, k, output)
    if (.not. c_associated(m) .or. piece < 1) then
      rc = fail(HML_ENOTFOUND, "hml_region_set_data: the region has no such map or array")
      return
    end if
    rc = from_c(c_tmap_set_data(m, int(piece - 1, c_size_t), a%data))
  end function

  ! --- quantities of interest ----------------------------------------------

  ! hml_qoi_write() or, with `path`, hml_qoi_write_to() of a description.
  function qoi(name, d, path) result(rc)
    character(len=*), intent(in) :: name
    type(hml_array), intent(in) :: d
    character(len=*), intent(in), optional :: path
    integer :: rc
    character(kind=c_char), allocatable, target :: cpath(:)
    rc = check_array(d, "hml_qoi_write")
    if (rc /= HML_OK) return
    if (present(path)) then
      allocate(cpath(len(path) + 1))
      call to_chars(path, cpath)
      rc = from_c(c_qoi_write_to(c_loc(cpath), cstr(name), d%data, int(d%dtype, c_int), &
        int(d%ndim, c_int), d%shape))
    else
      rc = from_c(c_qoi_write(cstr(name), d%data, int(d%dtype, c_int), int(d%ndim, c_int), d%shape))
    end if
  end function

  !> Record `a` as the quantity of interest `name` in the file HML_QOI
  !> names (or in `path`); nothing when HML_QOI is unset. Stored as its C
  !> view: a(n1, n2) is the dataset [n2][n1]. 0 or a negative code.
  function qoi_f64(name, a, path) result(rc)
    character(len=*), intent(in) :: name
    real(real64), target :: a(..)
    character(len=*), intent(in), optional :: path
    integer :: rc
    rc = qoi(name, array_of_f64(a, name), path)
  end function

  function qoi_f32(name, a, path) result(rc)
    character(len=*), intent(in) :: name
    real(real32), target :: a(..)
    character(len=*), intent(in), optional :: path
    integer :: rc
    rc = qoi(name, array_of_f32(a, name), path)
  end function

  function qoi_i32(name, a, path) result(rc)
    character(len=*), intent(in) :: name
    integer(int32), target :: a(..)
    character(len=*), intent(in), optional :: path
    integer :: rc
    rc = qoi(name, array_of_i32(a, name), path)
  end function

  function qoi_i64(name, a, path) result(rc)
    character(len=*), intent(in) :: name
    integer(int64), target :: a(..)
    character(len=*), intent(in), optional :: path
    integer :: rc
    rc = qoi(name, array_of_i64(a, name), path)
  end function
end module hml
