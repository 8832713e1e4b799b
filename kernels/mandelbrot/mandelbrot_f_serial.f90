! Mandelbrot, Fortran serial: rows top to bottom; the C harness does everything but the loop.
module mandelbrot_f_serial
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int, c_int32_t
  use sb_harness
  use mandelbrot_rows, only: mandelbrot_row
  use sb_simd_f, only: sb_inner_simd, sb_mandel_row_inner
  implicit none
  private
  public :: mandelbrot_f_serial_run

contains

  ! One repetition; the descriptor's run() (kernels/mandelbrot/mandelbrot_f_serial.c).
  integer(c_int) function mandelbrot_f_serial_run(ctx) bind(C, name='mandelbrot_f_serial_run')
    type(c_ptr), value :: ctx
    type(sb_params), pointer :: p
    integer(c_int32_t), pointer, contiguous :: counts(:, :)
    integer(c_int32_t) :: j

    p => sb_params_of(ctx)
    counts => sb_image_of(ctx, p%width, p%height)
    call sb_compute_begin(ctx)
    call sb_worker_begin(ctx, 0_c_int32_t)
    do j = 0, p%height - 1
      if (p%inner == sb_inner_simd) then
        call sb_mandel_row_inner(p, j, counts(:, j))
      else
        call mandelbrot_row(j, p%width, p%height, p%max_iter, p%region, counts(:, j))
      end if
    end do
    call sb_worker_end(ctx, 0_c_int32_t)
    call sb_compute_end(ctx)
    mandelbrot_f_serial_run = 0
  end function mandelbrot_f_serial_run

end module mandelbrot_f_serial
