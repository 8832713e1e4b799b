! The timed-region skeleton of the Fortran OpenMP kernels, the twin of sb_omp.h: inside the kernel's
! `!$omp parallel`, all threads exist, ONE starts the clock, each brackets its share with
! sb_worker_begin/end, ONE stops the clock after the last share. Compiled with -fopenmp: the
! constructs below are orphaned and bind to the caller's parallel region.
module sb_omp
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int32_t
  use omp_lib
  use sb_harness
  implicit none
  private
  public :: sb_omp_kind, sb_omp_region_begin, sb_omp_region_end

contains

  ! --schedule -> omp_set_schedule kind (the parser admits only static|dynamic|guided here).
  integer(omp_sched_kind) function sb_omp_kind(schedule)
    integer(c_int32_t), intent(in) :: schedule

    select case (schedule)
    case (sb_sched_dynamic)
      sb_omp_kind = omp_sched_dynamic
    case (sb_sched_guided)
      sb_omp_kind = omp_sched_guided
    case default
      sb_omp_kind = omp_sched_static
    end select
  end function sb_omp_kind

  ! Every thread of the region, first thing: one thread stores the team size in team (shared in
  ! the caller, for sb_check_team after the region); the master starts the clock once all threads
  ! exist; then this thread's sb_worker_begin. Each thread measures its core clock first
  ! (sb_worker_clock). Returns this thread's worker number.
  integer(c_int32_t) function sb_omp_region_begin(ctx, team) result(worker)
    type(c_ptr), intent(in) :: ctx
    integer(c_int32_t), intent(inout) :: team

    worker = int(omp_get_thread_num(), c_int32_t)
    call sb_worker_clock(ctx, worker, 0_c_int32_t)
    !$omp single
    team = int(omp_get_num_threads(), c_int32_t)
    !$omp end single
    ! the single's implied barrier: every thread exists before the clock starts
    !$omp master
    call sb_compute_begin(ctx)
    !$omp end master
    !$omp barrier
    call sb_worker_begin(ctx, worker)
  end function sb_omp_region_begin

  ! Every thread of the region, last thing: this thread's sb_worker_end, then the master stops the
  ! clock once every share is done; every thread measures its core clock again, outside the clock.
  subroutine sb_omp_region_end(ctx, worker)
    type(c_ptr), intent(in) :: ctx
    integer(c_int32_t), intent(in) :: worker

    call sb_worker_end(ctx, worker)
    !$omp barrier
    !$omp master
    call sb_compute_end(ctx)
    !$omp end master
    call sb_worker_clock(ctx, worker, 1_c_int32_t)
  end subroutine sb_omp_region_end

end module sb_omp
