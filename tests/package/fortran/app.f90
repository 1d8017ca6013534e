! An outside Fortran application: `use hml` from the package, a region
! over an array with lower bound 0, one off-mode call, and what the
! runtime gathers from it checked by value.
program app_f
  use, intrinsic :: iso_fortran_env, only: real64, int64
  use hml
  implicit none
  real(real64), target :: u(0:2, 0:1)
  real(real64) :: got(6)
  type(hml_region) :: r
  integer(int64) :: rows, row_size
  integer :: i, j
  do j = 0, 1
    do i = 0, 2
      u(i, j) = 10 * i + j
    end do
  end do
  if (hml_region_open(r, "outside_f", mode=HML_MODE_OFF) /= 0) call die()
  if (hml_region_inout(r, "[j, i, 0:1] = ([j, i])", "", [hml_array_of(u, "u")]) /= 0) call die()
  if (hml_region_begin(r) /= 1) call die()
  if (hml_region_end(r) /= 0) call die()
  if (hml_region_map_size(r, 1, rows, row_size) /= 0) call die()
  if (rows /= 6 .or. row_size /= 1) call die()
  if (hml_region_gather(r, 1, got) /= 0) call die()
  if (any(abs(got - [0, 10, 20, 1, 11, 21]) > 0.5)) call die()
  call hml_region_free(r)
  write (*, '("package: Fortran app against hml ", a, ": ok")') hml_version()
contains
  subroutine die()
    write (*, '("package: Fortran app failed: ", a)') hml_error_message()
    stop 1
  end subroutine
end program app_f
