! Monte-Carlo pi, Fortran OpenMP: `!$omp do schedule(runtime)` over batches of --batch samples; after
! each batch the thread adds the batch's hits to the total as --sync says, exactly as the C OpenMP
! kernel does:
!   reduction  reduction(+:total): updates go to a private copy, combined once at the end
!   atomic     !$omp atomic on the shared total
!   critical   !$omp critical around the shared total
module mcpi_f_omp
  use, intrinsic :: iso_c_binding, only: c_ptr, c_int, c_int32_t, c_int64_t
  use omp_lib, only: omp_set_schedule, omp_set_dynamic
  use sb_harness
  use sb_omp
  use mcpi_hits, only: mcpi_batch_hits, mcpi_batch_count
  implicit none
  private
  public :: mcpi_f_omp_run

contains

  ! One repetition; the descriptor's run() (kernels/mcpi/mcpi_f_omp.c).
  integer(c_int) function mcpi_f_omp_run(ctx) bind(C, name='mcpi_f_omp_run')
    type(c_ptr), value :: ctx
    type(sb_params), pointer :: p
    integer(c_int64_t) :: nbatches, b, h, total, work
    integer(c_int32_t) :: worker
    integer(c_int32_t) :: team

    p => sb_params_of(ctx)
    nbatches = mcpi_batch_count(p)
    call omp_set_schedule(sb_omp_kind(p%schedule), int(p%chunk))
    call omp_set_dynamic(.false.)
    total = 0
    team = 0
    !$omp parallel num_threads(p%threads) default(shared) private(worker, b, h, work)
    worker = sb_omp_region_begin(ctx, team)
    work = 0
    select case (p%sync)
    case (sb_sync_reduction)
      !$omp do schedule(runtime) reduction(+:total)
      do b = 0, nbatches - 1
        work = work + min(p%batch, p%samples - b * p%batch)
        total = total + mcpi_batch_hits(p, b)
      end do
      !$omp end do
    case (sb_sync_atomic)
      !$omp do schedule(runtime)
      do b = 0, nbatches - 1
        work = work + min(p%batch, p%samples - b * p%batch)
        h = mcpi_batch_hits(p, b)
        !$omp atomic
        total = total + h
      end do
      !$omp end do
    case default ! critical
      !$omp do schedule(runtime)
      do b = 0, nbatches - 1
        work = work + min(p%batch, p%samples - b * p%batch)
        h = mcpi_batch_hits(p, b)
        !$omp critical (sb_total)
        total = total + h
        !$omp end critical (sb_total)
      end do
      !$omp end do
    end select
    call sb_worker_add_work(ctx, worker, work)
    call sb_omp_region_end(ctx, worker)
    !$omp end parallel
    call sb_check_team(ctx, team)
    call sb_set_hits(ctx, total)
    mcpi_f_omp_run = 0
  end function mcpi_f_omp_run

end module mcpi_f_omp
