! The Fortran module `hml` (runtime/fortran/hml.f90): Fortran arrays
! described in place as their C view (reversed dims, indices from the
! lower bound), checked by value against what the runtime gathers; lower
! bounds other than 1, contiguous and strided slices, every element type,
! and the error status and message of each refusal. Values are compared
! exactly (-Wno-compare-reals): they are small integers, stored exactly.
! The agreement callback of hml_region_set_agree() (a module procedure:
! c_funloc of an internal procedure would need an executable trampoline).
module fortran_agree
  use, intrinsic :: iso_c_binding
  implicit none
contains
  ! Counts the calls in its context when asked with local = 1.
  function agree_count(local, ctx) bind(C) result(all)
    integer(c_int), value :: local
    type(c_ptr), value :: ctx
    integer(c_int) :: all
    integer(c_int), pointer :: n
    call c_f_pointer(ctx, n)
    if (local == 1) n = n + 1
    all = local
  end function
end module

program test_fortran
  use, intrinsic :: iso_fortran_env, only: real32, real64, int32, int64
  use, intrinsic :: iso_c_binding
  use hml
  use hml_c, only: c_options, c_array, c_symbol, c_error
  use fortran_agree, only: agree_count
  implicit none
  integer :: failures = 0, checks = 0

  interface
    ! tests/unit/fortran_layout.c: sizes and offsets of the C structs
    function c_layout(which) bind(C, name="hml_test_c_layout") result(n)
      import :: c_int, c_size_t
      integer(c_int), value :: which
      integer(c_size_t) :: n
    end function
    function c_constant(k) bind(C, name="hml_test_c_constant") result(v)
      import :: c_int
      integer(c_int), value :: k
      integer(c_int) :: v
    end function
  end interface

  call layout_matches_c()
  call constants_match_c()
  call describe_reverses_dims()
  call gather_non1_lower_bounds()
  call gather_stencil()
  call gather_contiguous_slice()
  call strided_slices_refused()
  call gather_3d_float()
  call gather_int_input()
  call errors_have_status_and_message()
  call calls_and_stats()
  call agreement()
  call qoi_write_to_file()
  write (*, '(i0, " checks, ", i0, " failed")') checks, failures
  if (failures > 0) stop 1

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    checks = checks + 1
    if (.not. ok) then
      failures = failures + 1
      write (*, '("FAIL: ", a, " (last error: ", a, ")")') what, hml_error_message()
    end if
  end subroutine

  ! Open an off-mode region and add `a` as an input; returns the status.
  function region_with(r, functor, domain, a) result(rc)
    type(hml_region), intent(inout) :: r
    character(len=*), intent(in) :: functor, domain
    type(hml_array), intent(in) :: a
    integer :: rc
    rc = hml_region_open(r, "fortran_test", mode=HML_MODE_OFF)
    call check(rc == HML_OK, "open an off-mode region")
    rc = hml_region_input(r, functor, domain, [a])
  end function

  ! Gather input map 1 of `r` into `got`.
  subroutine gather(r, rows, row_size, got)
    type(hml_region), intent(in) :: r
    integer(int64), intent(out) :: rows, row_size
    real(real64), allocatable, intent(out) :: got(:)
    call check(hml_region_map_size(r, 1, rows, row_size) == HML_OK, "map size")
    allocate(got(rows * row_size))
    call check(hml_region_gather(r, 1, got) == HML_OK, "gather")
  end subroutine

  ! Byte offset of `b` from `a` (two parts of one variable).
  function offset(a, b) result(n)
    type(c_ptr), intent(in) :: a, b
    integer(c_size_t) :: n
    n = int(transfer(b, 0_c_intptr_t) - transfer(a, 0_c_intptr_t), c_size_t)
  end function

  ! The bind(C) mirrors of hml_c.f90 against the C headers.
  subroutine layout_matches_c()
    type(c_options), target :: o
    type(c_array), target :: a
    type(c_symbol) :: s
    type(c_error) :: e
    type(hml_region_stats), target :: st
    call check(c_sizeof(o) == c_layout(1), "hml_region_options size")
    call check(offset(c_loc(o), c_loc(o%flush_bytes)) == c_layout(2), "hml_region_options.flush_bytes")
    call check(c_sizeof(a) == c_layout(3), "hml_array size")
    call check(offset(c_loc(a), c_loc(a%shape)) == c_layout(4), "hml_array.shape")
    call check(c_sizeof(s) == c_layout(5), "hml_symbol size")
    call check(c_sizeof(e) == c_layout(6), "hml_error size")
    call check(c_sizeof(st) == c_layout(7), "hml_region_stats size")
    call check(offset(c_loc(st), c_loc(st%nonfinite_calls)) == c_layout(8), "hml_region_stats.nonfinite_calls")
    call check(offset(c_loc(st), c_loc(st%region_s)) == c_layout(9), "hml_region_stats.region_s")
  end subroutine

  ! The module's constants against the C headers' (fortran_layout.c's list).
  subroutine constants_match_c()
    integer, parameter :: f(*) = [HML_OK, HML_ERROR, HML_EINVALID, HML_ENOMEM, HML_ENOTFOUND, &
      HML_EIO, HML_ESHAPE, HML_ERANGE, HML_ENOTSUPPORTED, HML_EMODEL, HML_ESYNTAX, HML_EEXISTS, &
      HML_ELOCKED, HML_MODE_DEFAULT, HML_MODE_OFF, HML_MODE_COLLECT, HML_MODE_INFER, &
      HML_MODE_INTERLEAVE, HML_MODE_SHADOW, HML_ON_ERROR_DEFAULT, HML_ON_ERROR_FALLBACK, &
      HML_ON_ERROR_FAIL, HML_F32, HML_F64, HML_I32, HML_I64, HML_MAX_DIMS]
    integer :: k
    do k = 1, size(f)
      call check(f(k) == c_constant(k), "constant " // trim(adjustl(itoa(k))) // " as in C")
    end do
    call check(c_constant(size(f) + 1) == -1000, "as many constants as C lists")
  end subroutine

  function itoa(v) result(s)
    integer, intent(in) :: v
    character(len=12) :: s
    write (s, '(i0)') v
  end function

  subroutine describe_reverses_dims()
    real(real64), target :: u(0:4, -1:2)
    type(hml_array) :: d
    d = hml_array_of(u, "u")
    call check(d%ndim == 2 .and. all(d%shape(1:2) == [4, 5]), "u(0:4, -1:2) is the C array u[4][5]")
    call check(d%dtype == HML_F64 .and. d%contiguous .and. d%name == "u", "dtype, contiguity, name")
  end subroutine

  ! u(0:4, -1:2): functor [a, b] is u(0 + b, -1 + a); rows in C order.
  subroutine gather_non1_lower_bounds()
    real(real64), target :: u(0:4, -1:2)
    real(real64), allocatable :: got(:)
    type(hml_region) :: r
    integer(int64) :: rows, row_size
    integer :: i, j, a, b
    do j = -1, 2
      do i = 0, 4
        u(i, j) = 10 * i + j
      end do
    end do
    call check(region_with(r, "[i, j, 0:1] = ([i, j])", "", hml_array_of(u, "u")) == 0, "bind u")
    call gather(r, rows, row_size, got)
    call check(rows == 20 .and. row_size == 1, "20 rows of 1")
    do a = 0, 3
      do b = 0, 4
        call check(got(a * 5 + b + 1) == u(b, a - 1), "row [a, b] is u(b, a - 1)")
      end do
    end do
    call hml_region_free(r)
  end subroutine

  ! A stencil along the first Fortran index (the last C index), the
  ! domain chosen by the runtime: 1:4 along it, all of the other.
  subroutine gather_stencil()
    real(real64), target :: u(0:4, -1:2)
    real(real64), allocatable :: got(:)
    type(hml_region) :: r
    integer(int64) :: rows, row_size
    integer :: i, j, a, b, c
    do j = -1, 2
      do i = 0, 4
        u(i, j) = 10 * i + j
      end do
    end do
    call check(region_with(r, "[i, j, 0:3] = ([i, j-1:j+2])", "", hml_array_of(u, "u")) == 0, &
      "bind a stencil")
    call gather(r, rows, row_size, got)
    call check(rows == 4 * 3 .and. row_size == 3, "12 rows of 3")
    do a = 0, 3
      do b = 1, 3
        do c = 0, 2
          call check(got(((a * 3) + (b - 1)) * 3 + c + 1) == u(b - 1 + c, a - 1), &
            "stencil value is u(b - 1 + c, a - 1)")
        end do
      end do
    end do
    call hml_region_free(r)
  end subroutine

  ! u(:, 0:1) is contiguous: the C array [2][5] from u(0, 0).
  subroutine gather_contiguous_slice()
    type(hml_array) :: d
    real(real64), target :: u(0:4, -1:2)
    real(real64), allocatable :: got(:)
    type(hml_region) :: r
    integer(int64) :: rows, row_size
    integer :: i, j, a, b
    do j = -1, 2
      do i = 0, 4
        u(i, j) = 10 * i + j
      end do
    end do
    d = hml_array_of(u(:, 0:1), "s")
    call check(all(d%shape(1:2) == [2, 5]), "slice shape [2][5]")
    call check(region_with(r, "[i, j, 0:1] = ([i, j])", "", hml_array_of(u(:, 0:1), "s")) == 0, &
      "bind a contiguous slice")
    call gather(r, rows, row_size, got)
    call check(rows == 10, "10 rows")
    do a = 0, 1
      do b = 0, 4
        call check(got(a * 5 + b + 1) == u(b, a), "slice row [a, b] is u(b, a)")
      end do
    end do
    call hml_region_free(r)
  end subroutine

  subroutine strided_slices_refused()
    type(hml_array) :: d
    real(real64), target :: u(0:4, -1:2)
    type(hml_region) :: r
    integer :: rc
    u = 0
    d = hml_array_of(u(0:4:2, :), "s")
    call check(.not. d%contiguous, "a strided slice is not contiguous")
    rc = region_with(r, "[i, j, 0:1] = ([i, j])", "", hml_array_of(u(0:4:2, :), "s"))
    call check(rc == HML_EINVALID, "strided slice: HML_EINVALID")
    call check(hml_error_code() == HML_EINVALID, "hml_error_code() is the module's refusal")
    call check(index(hml_error_message(), "array 's' is not contiguous") > 0, "message names the array")
    call hml_region_free(r)
    rc = region_with(r, "[i, j, 0:1] = ([i, j])", "", hml_array_of(u(1:3, :), "t"))
    call check(rc == HML_EINVALID, "a slice of part of each column: HML_EINVALID")
    call hml_region_free(r)
    call check(hml_qoi_write("x", u(0:4:2, :)) == HML_EINVALID, "strided QoI refused")
  end subroutine

  ! w(2:3, 0:1, 5:7) in single precision: the C array [3][2][2].
  subroutine gather_3d_float()
    type(hml_array) :: d
    real(real32), target :: w(2:3, 0:1, 5:7)
    real(real64), allocatable :: got(:)
    type(hml_region) :: r
    integer(int64) :: rows, row_size
    integer :: i, j, k, a, b, c
    do k = 5, 7
      do j = 0, 1
        do i = 2, 3
          w(i, j, k) = real(100 * i + 10 * j + k, real32)
        end do
      end do
    end do
    d = hml_array_of(w, "w")
    call check(all(d%shape(1:3) == [3, 2, 2]), "w is w[3][2][2]")
    call check(region_with(r, "[i, 0:2, 0:2] = ([i, 0:2, 0:2])", "", hml_array_of(w, "w")) == 0, "bind w")
    call gather(r, rows, row_size, got)
    call check(rows == 3 .and. row_size == 4, "3 rows of 4")
    do a = 0, 2
      do b = 0, 1
        do c = 0, 1
          call check(got(a * 4 + b * 2 + c + 1) == w(2 + c, b, 5 + a), "w value is w(2 + c, b, 5 + a)")
        end do
      end do
    end do
    call hml_region_free(r)
  end subroutine

  subroutine gather_int_input()
    type(hml_array) :: d
    integer(int32), target :: days(-3:2)
    integer(int64), target :: big(1:3)
    real(real64), allocatable :: got(:)
    type(hml_region) :: r
    integer(int64) :: rows, row_size
    integer :: i
    days = [(i * 7, i = -3, 2)]
    call check(region_with(r, "[i, 0:1] = ([i])", "", hml_array_of(days, "days")) == 0, "bind int32")
    call gather(r, rows, row_size, got)
    call check(rows == 6 .and. all(got == [(real(i * 7, real64), i = -3, 2)]), "int32 values from -3")
    call hml_region_free(r)
    big = [2_int64**40, 5_int64, -1_int64]
    d = hml_array_of(big, "big")
    call check(d%dtype == HML_I64 .and. all(d%shape(1:1) == [3]), "int64 dtype")
  end subroutine

  subroutine errors_have_status_and_message()
    real(real64), target :: u(0:4, -1:2)
    real(real64) :: small(3)
    type(hml_region) :: r
    integer(int64) :: rows, row_size
    integer :: rc
    u = 0
    rc = region_with(r, "[i, 0:1] = ([i]", "", hml_array_of(u, "u"))
    call check(rc == HML_ESYNTAX, "unclosed functor: HML_ESYNTAX")
    call check(index(hml_error_message(), "expected ')'") > 0, "the syntax message says what was expected")
    call hml_region_free(r)
    rc = region_with(r, "[i, j, 0:1] = ([i, j+10])", "0:4, 0:5", hml_array_of(u, "u"))
    call check(rc == HML_ERANGE, "an access outside u: HML_ERANGE")
    call check(index(hml_error_message(), "'u'") > 0, "the range message names u")
    call check(hml_region_input(r, "[i, j, 0:1] = ([i, j])", "0:n, 0:5", [hml_array_of(u, "u")], &
      [hml_symbol("n", 4)]) >= 0, "a domain with a symbol")
    call check(hml_region_map_size(r, 7, rows, row_size) == HML_ENOTFOUND, "no map 7: HML_ENOTFOUND")
    call check(hml_region_gather(r, 1, small) == HML_ESHAPE, "a small buffer: HML_ESHAPE")
    call check(index(hml_error_message(), "the map gathers 20 values, it holds 3") > 0, "size message")
    call hml_region_free(r)
    call check(hml_region_open(r, "bad label") == HML_EINVALID, "a bad label: HML_EINVALID")
    call check(len(hml_error_message()) > 0, "a message")
    call check(hml_strerror(HML_EINVALID) == "invalid argument", "strerror")
  end subroutine

  subroutine calls_and_stats()
    real(real64), target :: u(3)
    type(hml_region) :: r
    type(hml_region_stats) :: s
    integer :: c
    u = 1
    call check(hml_region_open(r, "fortran_calls", mode=HML_MODE_OFF) == 0, "open")
    call check(hml_region_inout(r, "[i, 0:1] = ([i])", "", [hml_array_of(u, "u")]) == 0, "inout")
    do c = 1, 3
      call check(hml_region_begin(r) == 1, "off mode runs the original code")
      call check(hml_region_end(r) == 0, "end")
    end do
    call check(hml_region_mode(r) == HML_MODE_OFF, "mode off")
    call check(hml_mode_name(HML_MODE_OFF) == "off", "mode name off")
    call check(hml_region_stats_get(r, s) == 0 .and. s%calls == 3 .and. s%original_calls == 3, "3 calls")
    call check(hml_region_set_data(r, 1, 1, hml_array_of(u, "u")) == 0, "set_data")
    call check(hml_region_set_data(r, 3, 1, hml_array_of(u, "u")) == HML_ENOTFOUND, "set_data map 3")
    call hml_region_free(r)
    call hml_region_free(r)
    call check(len(hml_version()) > 0, "version")
    call row_calls()
  end subroutine

  ! hml_region_set_agree() from Fortran: a region in infer mode whose model
  ! is missing falls back, so asks with local = 1; the function sees its
  ! context; after c_null_funptr it is not asked.
  subroutine agreement()
    real(real64), target :: u(3)
    integer(c_int), target :: asked
    type(hml_region) :: r
    type(hml_region_stats) :: s
    type(c_funptr) :: fn
    u = 1
    asked = 0
    fn = c_funloc(agree_count)
    call check(hml_region_open(r, "fortran_agree", mode=HML_MODE_INFER, &
      on_error=HML_ON_ERROR_FALLBACK, model="/nonexistent/model.pt") == 0, "open infer")
    call check(hml_region_inout(r, "[i, 0:1] = ([i])", "", [hml_array_of(u, "u")]) == 0, "inout")
    call check(hml_region_set_agree(r, fn, c_loc(asked)) == 0, "set_agree")
    call check(hml_region_begin(r) == 1, "missing model: the original code")
    call check(hml_region_end(r) == 0, "end")
    call check(asked == 1, "asked once, with local = 1")
    call check(hml_region_set_agree(r, c_null_funptr) == 0, "removed")
    call check(hml_region_begin(r) == 1, "second call")
    call check(hml_region_end(r) == 0, "second end")
    call check(asked == 1, "not asked once removed")
    call check(hml_region_stats_get(r, s) == 0 .and. s%agreed_calls == 0, "agreed_calls")
    call hml_region_free(r)
  end subroutine

  ! Row calls from a loop (off mode: every row runs), a second begin and
  ! an end without one refused, and a seek that walks a batch-shaped map
  ! along the last Fortran dimension.
  subroutine row_calls()
    real(real64), target :: x(2, 0:5)
    real(real64) :: got(4)
    type(hml_region) :: r
    type(hml_region_stats) :: s
    integer(int64) :: i
    x = reshape([(real(i, real64), i = 0, 11)], [2, 6])
    call check(hml_region_open(r, "fortran_rows", mode=HML_MODE_OFF) == 0, "open rows")
    call check(hml_region_inout(r, "[i, 0:2] = ([i, 0:2])", "0:2", [hml_array_of(x(:, 0:1), "x")]) == 0, &
      "a batch of 2 rows of x")
    do i = 0, 1
      call check(hml_region_row_begin(r, i) == 1, "a row call runs the iteration")
      call check(hml_region_row_end(r) == 0, "row end")
    end do
    call check(hml_region_row_begin(r, 0_int64) == 1, "row call")
    call check(hml_region_row_begin(r, 1_int64) == HML_EINVALID, "a second begin on a thread: HML_EINVALID")
    call check(index(hml_error_message(), "called again before hml_region_row_end()") > 0, "its message")
    call check(hml_region_row_end(r) == 0, "row end")
    call check(hml_region_row_end(r) == HML_EINVALID, "an end without a begin: HML_EINVALID")
    call check(hml_region_stats_get(r, s) == 0, "stats")
    call check(s%calls == 3, "3 row calls")
    call check(hml_region_seek(r, 2_int64) == 0, "seek 2 rows")
    call check(hml_region_gather(r, 1, got) == 0, "gather after seek")
    call check(all(got == [4, 5, 6, 7]), "the seek moved along x's last dimension: x(:, 2:3)")
  end subroutine

  ! A QoI written to a named file; its layout is checked from Python by
  ! tests/e2e/139-fortran.bats.
  subroutine qoi_write_to_file()
    real(real64), target :: f(0:2, 1:2)
    character(len=512) :: dir
    integer :: st
    f = 1
    call get_environment_variable("HML_TEST_TMP", dir, status=st)
    if (st /= 0) dir = "."
    call check(hml_qoi_write("f", f, path=trim(dir) // "/fortran-qoi.h5") == 0, "QoI to a file")
  end subroutine
end program test_fortran
