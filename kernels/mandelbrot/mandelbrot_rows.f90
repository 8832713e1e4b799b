! Mandelbrot compute loop of the Fortran kernels. It follows sb_mandelbrot.h's pixel formula operation for
! operation (same parenthesisation, no FMA under -ffp-contract=off) so that the iteration counts are
! bit-identical to the C reference: gfortran honours parentheses and, without -ffast-math, never
! reassociates floating-point expressions.
module mandelbrot_rows
  use, intrinsic :: iso_fortran_env, only: int32, real64
  implicit none
  private
  public :: mandelbrot_row

contains

  ! Iteration counts of image row j (0-based, counted from the top) into counts(0:width-1).
  ! region = [x0, x1, y0, y1]. counts is the row's slice of the harness-owned uint32 image; the counts
  ! never exceed max_iter <= huge(int32), so int32 carries the same bits.
  pure subroutine mandelbrot_row(j, width, height, max_iter, region, counts)
    integer(int32), intent(in) :: j, width, height, max_iter
    real(real64), intent(in) :: region(4)
    integer(int32), intent(out) :: counts(0:width - 1)
    real(real64) :: dx, dy, cx, cy, x, y, xt
    integer(int32) :: i, n

    dx = (region(2) - region(1)) / real(width, real64)
    dy = (region(4) - region(3)) / real(height, real64)
    cy = region(4) - (real(j, real64) + 0.5_real64) * dy
    do i = 0, width - 1
      cx = region(1) + (real(i, real64) + 0.5_real64) * dx
      x = 0.0_real64
      y = 0.0_real64
      n = 0
      do while (n < max_iter)
        if (.not. (x * x + y * y <= 4.0_real64)) exit
        xt = (x * x - y * y) + cx
        y = ((2.0_real64 * x) * y) + cy
        x = xt
        n = n + 1
      end do
      counts(i) = n
    end do
  end subroutine mandelbrot_row

end module mandelbrot_rows
