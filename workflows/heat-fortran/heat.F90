! heat (Fortran) - the 2-D heat equation of workflows/heat (heat_physics.c)
! written in Fortran against the hml Fortran module (hml-fortran(3)):
! u' = u + a (uN + uS + uW + uE - 4u) on an n x n grid, explicit 5-point
! stencil, a ring of ghost cells (u = 0, the Dirichlet boundary): the
! field is u(0:n+1, 0:n+1).
!
! Two ways to replace it, chosen with --region, as in the C heat:
!   field  the hml region "heat_field" advances the whole field K steps per
!          call, in place (a CNN's job; zero padding is the boundary):
!            inout  [0:n, 0:n] = ([1:n+1, 1:n+1])   of u(0:n+1, 0:n+1)
!   rows   the hml region "heat_rows" is one step from u to v, each cell's
!          5-point neighbourhood a row (an MLP's job):
!            input  [i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2])  of u, u, u
!            output [i, j, 0:1] = ([i, j])                            of v
! The functors are written over the arrays' C view, u[n+2][n+2], indices
! counted from the lower bound 0: functor [b, a] is u(a, b), so the rows'
! pieces read u(j, i-1), u(j, i+1), u(j-1:j+1, i) (the stencil is the
! same either way round, so the functors are the C heat's).
!
! Quantities of interest (HML_QOI): "field" (the final n x n field, as
! its C view: dataset [j][i] is field(i, j)) and "total_heat" (the sum of
! the field after each region call's worth of steps).
!
!   heat [--n N] [--steps T] [--k K] [--alpha A] [--region field|rows]
!        [--init random|mode] [--seed S] [--quiet]
!
! Built with -DHML_BASELINE it contains no hml call at all (the baseline
! of bench/fortran.sh); the lines inside #ifndef HML_BASELINE are what
! hml costs it (bench/annotation.sh).
!
! Annotation: 19 lines, against 54 for the C heat written against the C
! API (heat_api.c) and 10 for its directive form (heat.c): Fortran arrays
! describe themselves (hml_array_of: no declared shapes), but Fortran has
! no hml directives, and each call that can fail is its own statement
! with its check (Fortran neither orders nor short-circuits .or.). The
! field region alone takes 12 (the directive form's share: 6).
program heat
  use, intrinsic :: iso_fortran_env, only: real64, int64, error_unit
  use, intrinsic :: ieee_arithmetic, only: ieee_is_nan
#ifndef HML_BASELINE
  use hml
#endif
  implicit none
  real(real64), parameter :: PI = 3.14159265358979323846_real64, CHECK_BOUND = 1e-10_real64
  integer, parameter :: MODE_P = 1, MODE_Q = 2
  integer :: n = 32, steps = 64, k = 4, seed = 42, calls, c
  real(real64) :: alpha = 0.2_real64, err = 0
  logical :: mode_init = .false., quiet = .false., rows = .false.
  real(real64), allocatable, target :: u(:, :), v(:, :), field(:, :), total(:)
  integer(int64) :: t0, t1, rate
#ifndef HML_BASELINE
  type(hml_region) :: r
#endif

  call parse_args()
  calls = steps / k
  allocate(u(0:n + 1, 0:n + 1), v(0:n + 1, 0:n + 1), total(calls), field(n, n), stat=c)
  if (c /= 0) call fail("out of memory for a " // itoa(n) // " x " // itoa(n) // " grid")
  call init_field(u)
  call system_clock(t0, rate)
#ifndef HML_BASELINE
  if (hml_region_open(r, trim(merge("heat_rows ", "heat_field", rows))) < 0) call fail(hml_error_message())
  if (rows) then
    if (hml_region_input(r, "[i, j, 0:5] = ([i-1, j], [i+1, j], [i, j-1:j+2])", "1:n+1, 1:n+1", &
        [(hml_array_of(u, "u"), c = 1, 3)], [hml_symbol("n", n)]) < 0) call fail(hml_error_message())
    if (hml_region_output(r, "[i, j, 0:1] = ([i, j])", "1:n+1, 1:n+1", [hml_array_of(v, "v")], &
        [hml_symbol("n", n)]) < 0) call fail(hml_error_message())
  else if (hml_region_inout(r, "[0:n, 0:n] = ([1:n+1, 1:n+1])", "", [hml_array_of(u, "u")], &
      [hml_symbol("n", n)]) < 0) then
    call fail(hml_error_message())
  end if
#endif
  do c = 1, calls
#ifndef HML_BASELINE
    if (hml_region_begin(r) /= 0) &
#endif
    call advance(u, v)
#ifndef HML_BASELINE
    if (hml_region_end(r) < 0) call fail(hml_error_message())
#endif
    if (rows) u(1:n, 1:n) = v(1:n, 1:n)   ! the step's result is the next step's field
    total(c) = sum(u(1:n, 1:n))
  end do
  call system_clock(t1)
  field = u(1:n, 1:n)
  if (mode_init) err = mode_error(u)
#ifndef HML_BASELINE
  if (hml_qoi_write("field", field) < 0) call fail(hml_error_message())
  if (hml_qoi_write("total_heat", total) < 0) call fail(hml_error_message())
  if (hml_region_flush(r) < 0) call fail(hml_error_message())
  call report(hml_mode_name(hml_region_mode(r)))
  call hml_region_free(r)
#else
  call report("baseline")
#endif

contains

  ! One step from a to b, interior cells only (the ghost ring stays 0).
  subroutine step(a, b)
    real(real64), intent(in) :: a(0:, 0:)
    real(real64), intent(inout) :: b(0:, 0:)
    integer :: i, j
    do j = 1, n
      do i = 1, n
        b(i, j) = a(i, j) + alpha * (a(i - 1, j) + a(i + 1, j) + a(i, j - 1) + a(i, j + 1) - 4 * a(i, j))
      end do
    end do
  end subroutine

  ! --region field: K steps of the field a in place (b is scratch);
  ! --region rows: one step from a to b.
  subroutine advance(a, b)
    real(real64), intent(inout) :: a(0:, 0:), b(0:, 0:)
    integer :: s
    if (rows) then
      call step(a, b)
      return
    end if
    do s = 1, k, 2
      call step(a, b)
      if (s == k) then
        a = b
      else
        call step(b, a)
      end if
    end do
  end subroutine

  ! --init mode: the discrete eigenmode sin(p pi i/(n+1)) sin(q pi j/(n+1));
  ! else a few hot and cold Gaussian bumps drawn from --seed.
  subroutine init_field(a)
    real(real64), intent(out) :: a(0:, 0:)
    real(real64) :: x(4), ci, cj, amp, rad
    integer :: i, j, b, m
    integer, allocatable :: s(:)
    a = 0
    if (mode_init) then
      do j = 1, n
        do i = 1, n
          a(i, j) = sin(MODE_P * PI * i / (n + 1)) * sin(MODE_Q * PI * j / (n + 1))
        end do
      end do
      return
    end if
    call random_seed(size=m)
    allocate(s(m))
    s = [(seed * 7919 + 104729 * i, i = 1, m)]
    call random_seed(put=s)
    do b = 1, 6
      call random_number(x)
      ci = (0.15 + 0.7 * x(1)) * n
      cj = (0.15 + 0.7 * x(2)) * n
      amp = 2 * x(3) - 1
      rad = (0.04 + 0.11 * x(4)) * n
      do j = 1, n
        do i = 1, n
          a(i, j) = a(i, j) + amp * exp(-((i - ci)**2 + (j - cj)**2) / (2 * rad * rad))
        end do
      end do
    end do
  end subroutine

  ! The largest error of the final field against g^steps times the mode,
  ! relative to the largest value of the exact field.
  function mode_error(a) result(e)
    real(real64), intent(in) :: a(0:, 0:)
    real(real64) :: e, g, sp, sq, exact, top
    integer :: i, j
    sp = sin(MODE_P * PI / (2.0_real64 * (n + 1)))
    sq = sin(MODE_Q * PI / (2.0_real64 * (n + 1)))
    g = (1 - 4 * alpha * (sp * sp + sq * sq))**steps
    e = 0
    top = 0
    do j = 1, n
      do i = 1, n
        exact = g * sin(MODE_P * PI * i / (n + 1)) * sin(MODE_Q * PI * j / (n + 1))
        if (abs(a(i, j) - exact) > e .or. ieee_is_nan(a(i, j))) e = abs(a(i, j) - exact)
        top = max(top, abs(exact))
      end do
    end do
    e = e / top
  end function

  subroutine report(mode)
    character(len=*), intent(in) :: mode
    if (quiet) return
    write (*, '("heat: n ", i0, ", steps ", i0, ", k ", i0, ", alpha ", g0.3, ", init ", a, ", seed ", i0, &
      & ", mode ", a)') n, steps, k, alpha, trim(merge("mode  ", "random", mode_init)), seed, mode
    write (*, '("heat: total heat ", es17.10, ", stepped in ", f0.3, " s")') total(calls), &
      real(t1 - t0, real64) / rate
    if (mode_init) write (*, '("heat: check mode decay: relative error ", es10.3, " (bound 1e-10) ", a)') &
      err, merge("pass", "FAIL", err <= CHECK_BOUND)
  end subroutine

  subroutine fail(message)
    character(len=*), intent(in) :: message
    write (error_unit, '("heat: error: ", a)') message
    stop 1, quiet=.true.
  end subroutine

  subroutine usage_error(message)
    character(len=*), intent(in) :: message
    write (error_unit, '("heat: error: ", a)') message
    stop 2, quiet=.true.
  end subroutine

  ! The integer after flag number i, at least `low`.
  function int_arg(i, low) result(v)
    integer, intent(in) :: i, low
    integer :: v, ios
    character(len=64) :: flag, val
    call get_command_argument(i, flag)
    call get_command_argument(i + 1, val)
    read (val, *, iostat=ios) v
    if (ios /= 0 .or. v < low .or. verify(trim(val), "0123456789-") /= 0 .or. len_trim(val) == 0) &
      call usage_error(trim(flag) // " needs an integer >= " // itoa(low) // ", got '" // trim(val) // "'")
  end function

  function itoa(v) result(s)
    integer, intent(in) :: v
    character(len=:), allocatable :: s
    character(len=16) :: buf
    write (buf, '(i0)') v
    s = trim(buf)
  end function

  subroutine parse_args()
    character(len=64) :: a, val
    integer :: i, ios
    i = 1
    do while (i <= command_argument_count())
      call get_command_argument(i, a)
      call get_command_argument(i + 1, val)
      select case (a)
      case ("--n")
        n = int_arg(i, 1)
      case ("--steps")
        steps = int_arg(i, 1)
      case ("--k")
        k = int_arg(i, 1)
      case ("--seed")
        seed = int_arg(i, 0)
      case ("--alpha")
        read (val, *, iostat=ios) alpha
        if (ios /= 0 .or. .not. (alpha > 0 .and. alpha <= 0.25)) &
          call usage_error("--alpha needs a number in (0, 0.25], got '" // trim(val) // "'")
      case ("--region")
        if (val /= "field" .and. val /= "rows") &
          call usage_error("--region needs 'field' or 'rows', got '" // trim(val) // "'")
        rows = val == "rows"
      case ("--init")
        if (val /= "random" .and. val /= "mode") &
          call usage_error("--init needs 'random' or 'mode', got '" // trim(val) // "'")
        mode_init = val == "mode"
      case ("--quiet", "-q")
        quiet = .true.
        i = i - 1
      case ("--help", "-h")
        write (*, '(a)') "usage: heat [--n N] [--steps T] [--k K] [--alpha A] [--region field|rows]", &
          "            [--init random|mode] [--seed S] [--quiet]", &
          "Runs T explicit steps of the 2-D heat equation on an N x N grid (default 32,", &
          "64 steps, alpha 0.2). --region field: the region advances the whole field K", &
          "steps per call (default 4; T must be a multiple of K); --region rows: one step", &
          "per call, each cell's 5-point neighbourhood a row. --init mode checks the", &
          "decay of a sin*sin mode against its exact factor. The Fortran twin of", &
          "workflows/heat.", &
          "hml settings come from the environment: HML_MODE, HML_MODEL, HML_DB, HML_QOI, ..."
        stop
      case default
        call usage_error("unknown argument '" // trim(a) // "'")
      end select
      i = i + 2
    end do
    if (rows) k = 1
    if (mod(steps, k) /= 0) &
      call usage_error("--steps " // itoa(steps) // " is not a multiple of --k " // itoa(k))
  end subroutine
end program heat
