! Fortran view of the C harness (kernels/common/harness.h) through iso_c_binding: the Fortran kernels
! use the one C harness for options, timing, placement, records and checksum, and contain only their
! compute loops. Keep every declaration here in step with harness.h (field order of sb_params, enum
! codes, prototypes): the C compiler cannot check this file.
module sb_harness
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int32_t, c_int64_t, c_double, c_char, &
                                         c_null_char, c_f_pointer, c_associated
  implicit none
  private

  ! harness.h: enum sb_schedule
  integer(c_int32_t), parameter, public :: sb_sched_none = 0, sb_sched_static = 1, &
                                           sb_sched_dynamic = 2, sb_sched_guided = 3
  ! harness.h: enum sb_sync
  integer(c_int32_t), parameter, public :: sb_sync_none = 0, sb_sync_atomic = 3, &
                                           sb_sync_reduction = 4, sb_sync_critical = 5

  ! harness.h: struct sb_params, same fields in the same order.
  type, bind(C), public :: sb_params
    integer(c_int64_t) :: samples, seed, batch
    real(c_double) :: region(4)
    integer(c_int32_t) :: kernel, threads, reps, warmup, schedule, chunk, sync, inner, width, &
                          height, max_iter, preset
  end type sb_params

  public :: sb_compute_begin, sb_compute_end, sb_worker_begin, sb_worker_end, sb_set_hits
  public :: sb_worker_add_work, sb_worker_clock
  public :: sb_check_team, sb_params_of, sb_image_of, sb_fail_with

  interface
    function sb_params_get(ctx) bind(C, name='sb_params_get')
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: sb_params_get
    end function sb_params_get

    subroutine sb_compute_begin(ctx) bind(C, name='sb_compute_begin')
      import :: c_ptr
      type(c_ptr), value :: ctx
    end subroutine sb_compute_begin

    subroutine sb_compute_end(ctx) bind(C, name='sb_compute_end')
      import :: c_ptr
      type(c_ptr), value :: ctx
    end subroutine sb_compute_end

    subroutine sb_worker_begin(ctx, worker) bind(C, name='sb_worker_begin')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: worker
    end subroutine sb_worker_begin

    subroutine sb_worker_end(ctx, worker) bind(C, name='sb_worker_end')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: worker
    end subroutine sb_worker_end

    ! This worker's core clock, outside the timed region (harness.h): sb_omp_f.f90 calls it.
    subroutine sb_worker_clock(ctx, worker, after) bind(C, name='sb_worker_clock')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: worker, after
    end subroutine sb_worker_clock

    ! This worker's work (Mandelbrot iterations, pi samples): harness.h, per-worker measurements.
    subroutine sb_worker_add_work(ctx, worker, units) bind(C, name='sb_worker_add_work')
      import :: c_ptr, c_int32_t, c_int64_t
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: worker
      integer(c_int64_t), value :: units
    end subroutine sb_worker_add_work

    function sb_image(ctx) bind(C, name='sb_image')
      import :: c_ptr
      type(c_ptr), value :: ctx
      type(c_ptr) :: sb_image
    end function sb_image

    subroutine sb_set_hits(ctx, hits) bind(C, name='sb_set_hits')
      import :: c_ptr, c_int64_t
      type(c_ptr), value :: ctx
      integer(c_int64_t), value :: hits
    end subroutine sb_set_hits

    subroutine sb_check_team(ctx, team) bind(C, name='sb_check_team')
      import :: c_ptr, c_int32_t
      type(c_ptr), value :: ctx
      integer(c_int32_t), value :: team
    end subroutine sb_check_team

    subroutine sb_fail(ctx, message) bind(C, name='sb_fail')
      import :: c_ptr, c_char
      type(c_ptr), value :: ctx
      character(kind=c_char), intent(in) :: message(*)
    end subroutine sb_fail
  end interface

contains

  ! The parsed parameters (harness-owned, valid for the whole run).
  function sb_params_of(ctx) result(p)
    type(c_ptr), intent(in) :: ctx
    type(sb_params), pointer :: p

    call c_f_pointer(sb_params_get(ctx), p)
  end function sb_params_of

  ! The harness's uint32 result image as counts(column, row), 0-based like sb_mandelbrot.h's pixel (i, j):
  ! C's row-major width x height is Fortran's column-major (0:width-1, 0:height-1), so counts(:, j) is
  ! row j, contiguous.
  function sb_image_of(ctx, width, height) result(counts)
    type(c_ptr), intent(in) :: ctx
    integer(c_int32_t), intent(in) :: width, height
    integer(c_int32_t), pointer, contiguous :: counts(:, :)
    integer(c_int32_t), pointer, contiguous :: flat(:, :)
    type(c_ptr) :: image

    image = sb_image(ctx)
    if (.not. c_associated(image)) call sb_fail_with(ctx, 'internal error: no result image')
    call c_f_pointer(image, flat, [width, height])
    counts(0:, 0:) => flat
  end function sb_image_of

  ! sb_fail with a Fortran string: prints "<binary>: <message>" on stderr and exits 1.
  subroutine sb_fail_with(ctx, message)
    type(c_ptr), intent(in) :: ctx
    character(len=*), intent(in) :: message

    call sb_fail(ctx, message // c_null_char)
  end subroutine sb_fail_with

end module sb_harness
