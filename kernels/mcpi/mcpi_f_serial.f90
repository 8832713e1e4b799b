! Monte-Carlo pi, Fortran serial: batches of --batch samples as in every other model, so --batch means
! the same everywhere; the C harness does everything but the loop.
module mcpi_f_serial
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int, c_int32_t, c_int64_t
  use sb_harness
  use mcpi_hits, only: mcpi_batch_hits, mcpi_batch_count
  implicit none
  private
  public :: mcpi_f_serial_run

contains

  ! One repetition; the descriptor's run() (kernels/mcpi/mcpi_f_serial.c).
  integer(c_int) function mcpi_f_serial_run(ctx) bind(C, name='mcpi_f_serial_run')
    type(c_ptr), value :: ctx
    type(sb_params), pointer :: p
    integer(c_int64_t) :: b, hits

    p => sb_params_of(ctx)
    hits = 0
    call sb_compute_begin(ctx)
    call sb_worker_begin(ctx, 0_c_int32_t)
    do b = 0, mcpi_batch_count(p) - 1
      hits = hits + mcpi_batch_hits(p, b)
    end do
    call sb_worker_end(ctx, 0_c_int32_t)
    call sb_compute_end(ctx)
    call sb_set_hits(ctx, hits)
    mcpi_f_serial_run = 0
  end function mcpi_f_serial_run

end module mcpi_f_serial
