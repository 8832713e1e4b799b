! Mandelbrot, Fortran OpenMP: `parallel do` over rows with schedule(runtime), set from --schedule by
! omp_set_schedule exactly as the C OpenMP kernel does, so the two differ only in the language.
module mandelbrot_f_omp
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int, c_int32_t, c_int64_t
  use omp_lib, only: omp_set_schedule, omp_set_dynamic
  use sb_harness
  use sb_omp
  use mandelbrot_rows, only: mandelbrot_row
  use sb_simd_f, only: sb_inner_simd, sb_mandel_row_inner
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
    integer(c_int32_t) :: team
    integer(c_int64_t) :: work

    p => sb_params_of(ctx)
    counts => sb_image_of(ctx, p%width, p%height)
    ! chunk 0 = the runtime's default for the kind (static: one block per thread)
    call omp_set_schedule(sb_omp_kind(p%schedule), int(p%chunk))
    call omp_set_dynamic(.false.)
    team = 0
    !$omp parallel num_threads(p%threads) default(shared) private(worker, j, work)
    worker = sb_omp_region_begin(ctx, team)
    work = 0
    !$omp do schedule(runtime)
    do j = 0, p%height - 1
      if (p%inner == sb_inner_simd) then
        call sb_mandel_row_inner(p, j, counts(:, j))
      else
        call mandelbrot_row(j, p%width, p%height, p%max_iter, p%region, counts(:, j))
      end if
      work = work + sum(int(counts(:, j), c_int64_t))
    end do
    !$omp end do nowait
    call sb_worker_add_work(ctx, worker, work)
    call sb_omp_region_end(ctx, worker)
    !$omp end parallel
    call sb_check_team(ctx, team)
    mandelbrot_f_omp_run = 0
  end function mandelbrot_f_omp_run

end module mandelbrot_f_omp
