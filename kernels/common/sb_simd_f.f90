! The Fortran view of sb_simd.h: with --inner simd the Fortran kernels call the C vector kernels
! (the Fortran loops stay the scalar reference). Both entry points dispatch on p%inner themselves.
module sb_simd_f
  use, intrinsic :: iso_c_binding, only: c_int32_t, c_int64_t
  use sb_harness, only: sb_params
  implicit none
  private
  public :: sb_inner_simd, sb_mandel_row_inner, sb_pi_hits_inner

  integer(c_int32_t), parameter :: sb_inner_simd = 1 ! harness.h enum sb_inner

  interface
    ! Counts of image row j (0-based from the top) into row(0:width-1).
    subroutine sb_mandel_row_inner(p, j, row) bind(C, name='sb_mandel_row_inner')
      import :: sb_params, c_int32_t
      type(sb_params), intent(in) :: p
      integer(c_int32_t), value :: j
      integer(c_int32_t), intent(out) :: row(*)
    end subroutine sb_mandel_row_inner

    ! Hits among samples [first, last) of p%seed.
    integer(c_int64_t) function sb_pi_hits_inner(p, first, last) bind(C, name='sb_pi_hits_inner')
      import :: sb_params, c_int64_t
      type(sb_params), intent(in) :: p
      integer(c_int64_t), value :: first, last
    end function sb_pi_hits_inner
  end interface
end module sb_simd_f
