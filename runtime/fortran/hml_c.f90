! hml_c.f90 - the C side of the module hml (hml.f90): the declarations of
! libhml's C API (runtime/include/hml/*.h) as ISO_C_BINDING interfaces, the
! C structs the wrappers fill, and the conversions of strings between C
! and Fortran. Used by hml.f90 only: an application uses the module hml
! (hml-fortran(3)); this module's names may change with the C API.
module hml_c
  use, intrinsic :: iso_c_binding
  implicit none
  private :: c_bind, c_call, c_map

  integer, parameter :: HML_MAX_DIMS = 8

  !> hml_region_stats of region.h (the counters are uint64_t there).
  type, bind(C) :: hml_region_stats
    integer(c_int64_t) :: calls = 0, original_calls = 0, model_calls = 0, &
      shadow_calls = 0, fallback_calls = 0, rows_in = 0, rows_out = 0
    real(c_double) :: region_s = 0, gather_s = 0, forward_s = 0, scatter_s = 0, &
      original_s = 0, write_s = 0, shadow_rmse = 0, shadow_max_abs = 0
    integer(c_int64_t) :: nonfinite_calls = 0
    integer(c_int64_t) :: checked_rows = 0, guarded_rows = 0, guarded_calls = 0, &
      guard_whole_calls = 0
    real(c_double) :: guard_s = 0
    integer(c_int64_t) :: agreed_calls = 0
    real(c_double) :: collect_outside_s = 0
  end type

  type, bind(C) :: c_array
    type(c_ptr) :: name = c_null_ptr, data = c_null_ptr
    integer(c_int) :: dtype = 0, ndim = 0
    integer(c_int64_t) :: shape(HML_MAX_DIMS) = 0
  end type

  type, bind(C) :: c_symbol
    type(c_ptr) :: name = c_null_ptr
    integer(c_int64_t) :: value = 0
  end type

  type, bind(C) :: c_error
    integer(c_int) :: code
    type(c_ptr) :: message
  end type

  type, bind(C) :: c_options
    integer(c_int) :: version = 2, mode = 0
    type(c_ptr) :: model = c_null_ptr, db = c_null_ptr
    integer(c_int) :: interleave = 0
    real(c_double) :: shadow = 0
    integer(c_int) :: threads = 0, on_error = 0
    type(c_ptr) :: profile = c_null_ptr
    real(c_double) :: flush_seconds = 0
    integer(c_size_t) :: flush_bytes = 0
    type(c_ptr) :: guard = c_null_ptr
  end type

  abstract interface
    function c_bind(r, functor, domain, arrays, narrays, symbols, nsymbols) bind(C) result(rc)
      import :: c_ptr, c_char, c_int, c_size_t
      type(c_ptr), value :: r, domain, arrays, symbols
      character(kind=c_char), intent(in) :: functor(*)
      integer(c_size_t), value :: narrays, nsymbols
      integer(c_int) :: rc
    end function
    function c_call(r) bind(C) result(rc)
      import :: c_ptr, c_int
      type(c_ptr), value :: r
      integer(c_int) :: rc
    end function
    function c_map(r, k) bind(C) result(m)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: r
      integer(c_size_t), value :: k
      type(c_ptr) :: m
    end function
  end interface

  interface
    function c_open(out, label, opts) bind(C, name="hml_region_open") result(rc)
      import :: c_ptr, c_char, c_int
      type(c_ptr), intent(out) :: out
      character(kind=c_char), intent(in) :: label(*)
      type(c_ptr), value :: opts
      integer(c_int) :: rc
    end function
    subroutine c_free(r) bind(C, name="hml_region_free")
      import :: c_ptr
      type(c_ptr), value :: r
    end subroutine
    function c_begin_if(r, run) bind(C, name="hml_region_begin_if") result(rc)
      import :: c_ptr, c_int
      type(c_ptr), value :: r
      integer(c_int), value :: run
      integer(c_int) :: rc
    end function
    function c_set_agree(r, agree, ctx) bind(C, name="hml_region_set_agree") result(rc)
      import :: c_ptr, c_funptr, c_int
      type(c_ptr), value :: r
      type(c_funptr), value :: agree
      type(c_ptr), value :: ctx
      integer(c_int) :: rc
    end function
    function c_row_begin_if(r, row, run) bind(C, name="hml_region_row_begin_if") result(rc)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: r
      integer(c_int64_t), value :: row
      integer(c_int), value :: run
      integer(c_int) :: rc
    end function
    function c_seek(r, rows) bind(C, name="hml_region_seek") result(rc)
      import :: c_ptr, c_int, c_int64_t
      type(c_ptr), value :: r
      integer(c_int64_t), value :: rows
      integer(c_int) :: rc
    end function
    function c_mode(r) bind(C, name="hml_region_mode") result(m)
      import :: c_ptr, c_int
      type(c_ptr), value :: r
      integer(c_int) :: m
    end function
    function c_mode_name(m) bind(C, name="hml_mode_name") result(s)
      import :: c_ptr, c_int
      integer(c_int), value :: m
      type(c_ptr) :: s
    end function
    function c_stats(r, out, size) bind(C, name="hml_region_stats_get_sized") result(rc)
      import :: c_ptr, c_int, c_size_t, hml_region_stats
      type(c_ptr), value :: r
      type(hml_region_stats), intent(out) :: out
      integer(c_size_t), value :: size
      integer(c_int) :: rc
    end function
    function c_tmap_rows(m) bind(C, name="hml_tmap_rows") result(n)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: m
      integer(c_int64_t) :: n
    end function
    function c_tmap_row_size(m) bind(C, name="hml_tmap_row_size") result(n)
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: m
      integer(c_int64_t) :: n
    end function
    function c_tmap_gather(m, dst, dtype, threads) bind(C, name="hml_tmap_gather") result(rc)
      import :: c_ptr, c_int
      type(c_ptr), value :: m, dst
      integer(c_int), value :: dtype, threads
      integer(c_int) :: rc
    end function
    function c_tmap_set_data(m, k, data) bind(C, name="hml_tmap_set_data") result(rc)
      import :: c_ptr, c_int, c_size_t
      type(c_ptr), value :: m, data
      integer(c_size_t), value :: k
      integer(c_int) :: rc
    end function
    function c_qoi_write_to(path, name, data, dtype, ndim, shape) &
        bind(C, name="hml_qoi_write_to") result(rc)
      import :: c_ptr, c_char, c_int, c_int64_t
      type(c_ptr), value :: path
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: data
      integer(c_int), value :: dtype, ndim
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int) :: rc
    end function
    function c_qoi_write(name, data, dtype, ndim, shape) bind(C, name="hml_qoi_write") result(rc)
      import :: c_ptr, c_char, c_int, c_int64_t
      character(kind=c_char), intent(in) :: name(*)
      type(c_ptr), value :: data
      integer(c_int), value :: dtype, ndim
      integer(c_int64_t), intent(in) :: shape(*)
      integer(c_int) :: rc
    end function
    function c_error_last() bind(C, name="hml_error_last") result(e)
      import :: c_ptr
      type(c_ptr) :: e
    end function
    subroutine c_error_clear() bind(C, name="hml_error_clear")
    end subroutine
    function c_strerror(code) bind(C, name="hml_strerror") result(s)
      import :: c_ptr, c_int
      integer(c_int), value :: code
      type(c_ptr) :: s
    end function
    function c_version() bind(C, name="hml_version") result(s)
      import :: c_ptr
      type(c_ptr) :: s
    end function
    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function
  end interface

  procedure(c_bind), bind(C, name="hml_region_input") :: c_input
  procedure(c_bind), bind(C, name="hml_region_output") :: c_output
  procedure(c_bind), bind(C, name="hml_region_inout") :: c_inout
  procedure(c_call), bind(C, name="hml_region_begin") :: c_begin
  procedure(c_call), bind(C, name="hml_region_end") :: c_end
  procedure(c_call), bind(C, name="hml_region_flush") :: c_flush
  procedure(c_call), bind(C, name="hml_region_row_end") :: c_row_end
  procedure(c_map), bind(C, name="hml_region_input_map") :: c_input_map
  procedure(c_map), bind(C, name="hml_region_output_map") :: c_output_map

contains

  function cstr(s) result(c)
    character(len=*), intent(in) :: s
    character(kind=c_char, len=:), allocatable :: c
    c = trim(s) // c_null_char
  end function

  function fstr(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      s = ''
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function
end module hml_c
