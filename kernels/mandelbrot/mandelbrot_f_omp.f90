! Mandelbrot, Fortran OpenMP: `parallel do` over rows with schedule(runtime), set from --schedule by
! omp_set_schedule exactly as the C OpenMP kernel does, so the two differ only in the language.
module mandelbrot_f_omp
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int, c_int32_t
  use omp_lib
  use sb_harness
  use mandelbrot_rows, only: mandelbrot_row
  implicit none
  private
  public :: mandelbrot_f_omp_run

contains

  ! One repetition; the descriptor's run() (kernels/mandelbrot/mandelbrot_f_omp.c).
  integer(c_int) function mandelbrot_f_omp_run(ctx) bind(C, name='mandelbrot_f_omp_run')
    type(c_ptr), value :: ctx
    type(sb_params), pointer :: p
    integer(c_int32_t), pointer, contiguous :: counts(:, :)
    integer(c_int32_t) :: j, worker
    integer :: team
    character(len=96) :: message

    p => sb_params_of(ctx)
    counts => sb_image_of(ctx, p%width, p%height)
    ! chunk 0 = the runtime's default for the kind (static: one block per thread)
    call omp_set_schedule(omp_kind(p%schedule), int(p%chunk))
    call omp_set_dynamic(.false.)
    team = 0
    !$omp parallel num_threads(p%threads) default(shared) private(worker, j)
    worker = int(omp_get_thread_num(), c_int32_t)
    !$omp single
    team = omp_get_num_threads()
    !$omp end single
    ! the single's implied barrier: every thread exists before the clock starts
    !$omp master
    call sb_compute_begin(ctx)
    !$omp end master
    !$omp barrier
    call sb_worker_begin(ctx, worker)
    !$omp do schedule(runtime)
    do j = 0, p%height - 1
      call mandelbrot_row(j, p%width, p%height, p%max_iter, p%region, counts(:, j))
    end do
    !$omp end do nowait
    call sb_worker_end(ctx, worker)
    !$omp barrier
    !$omp master
    call sb_compute_end(ctx)
    !$omp end master
    !$omp end parallel
    if (team /= p%threads) then
      write (message, '(a, i0, a, i0, a)') 'OpenMP gave ', team, ' threads instead of ', &
        p%threads, ' (OMP_THREAD_LIMIT?)'
      call sb_fail_with(ctx, trim(message))
    end if
    mandelbrot_f_omp_run = 0
  end function mandelbrot_f_omp_run

  integer(omp_sched_kind) function omp_kind(schedule)
    integer(c_int32_t), intent(in) :: schedule

    select case (schedule)
    case (sb_sched_dynamic)
      omp_kind = omp_sched_dynamic
    case (sb_sched_guided)
      omp_kind = omp_sched_guided
    case default
      omp_kind = omp_sched_static
    end select
  end function omp_kind

end module mandelbrot_f_omp
