! Monte-Carlo pi, Fortran serial: batches of --batch samples as in every other model, so --batch means
! the same everywhere; the C harness does everything but the loop.
module mcpi_f_serial
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int, c_int32_t, c_int64_t
  use sb_harness
  use mcpi_hits, only: mcpi_count_hits
  use sb_simd_f, only: sb_inner_simd, sb_pi_hits_inner
  implicit none
  private
  public :: mcpi_f_serial_run

contains

  ! One repetition; the descriptor's run() (kernels/mcpi/mcpi_f_serial.c).
  integer(c_int) function mcpi_f_serial_run(ctx) bind(C, name='mcpi_f_serial_run')
    type(c_ptr), value :: ctx
    type(sb_params), pointer :: p
    integer(c_int64_t) :: first, hits

    p => sb_params_of(ctx)
    hits = 0
    call sb_compute_begin(ctx)
    call sb_worker_begin(ctx, 0_c_int32_t)
    do first = 0, p%samples - 1, p%batch
      if (p%inner == sb_inner_simd) then
        hits = hits + sb_pi_hits_inner(p, first, first + min(p%batch, p%samples - first))
      else
        hits = hits + mcpi_count_hits(p%seed, first, min(p%batch, p%samples - first))
      end if
    end do
    call sb_worker_end(ctx, 0_c_int32_t)
    call sb_compute_end(ctx)
    call sb_set_hits(ctx, hits)
    mcpi_f_serial_run = 0
  end function mcpi_f_serial_run

end module mcpi_f_serial
