! Monte-Carlo pi sample loop of the Fortran kernels, with the counter-based SplitMix64 generator of
! docs/formats.md. Fortran has no unsigned integers: the generator works on integer(int64) bit patterns
! (ieor, logical shiftr) and relies on -fwrapv so that the multiplications wrap modulo 2**64 exactly as
! uint64_t does in C. Sample k depends only on (seed, k), so any worker may take any range of samples.
! The serial and the OpenMP kernel both call mcpi_batch_hits once per batch: the code a repetition
! spends its time in (it and the mcpi_count_hits it calls) is then the same bytes at the same alignment
! in both binaries (kernels/fortran.mk), and a speedup over the serial kernel measures the threads, not
! where the linker put each binary's own copy of the per-batch code.
module mcpi_hits
  use, intrinsic :: iso_fortran_env, only: int64, real64
  use sb_harness, only: sb_params
  use sb_simd_f, only: sb_inner_simd, sb_pi_hits_inner
  implicit none
  private
  public :: splitmix64_out, mcpi_count_hits, mcpi_batch_hits, mcpi_batch_count

  integer(int64), parameter :: golden_gamma = int(z'9E3779B97F4A7C15', int64)
  integer(int64), parameter :: mix_mul1 = int(z'BF58476D1CE4E5B9', int64)
  integer(int64), parameter :: mix_mul2 = int(z'94D049BB133111EB', int64)
  ! 2**-53: (output >> 11) * 2**-53 is an exact double in [0, 1).
  real(real64), parameter :: two_pow_m53 = 1.0_real64 / 9007199254740992.0_real64

contains

  ! Output n (0-based) of SplitMix64 seeded with seed: mix(seed + (n + 1) * golden_gamma).
  elemental integer(int64) function splitmix64_out(seed, n) result(z)
    integer(int64), intent(in) :: seed, n

    z = seed + (n + 1_int64) * golden_gamma
    z = ieor(z, shiftr(z, 30)) * mix_mul1
    z = ieor(z, shiftr(z, 27)) * mix_mul2
    z = ieor(z, shiftr(z, 31))
  end function splitmix64_out

  ! Hits among samples first .. first+count-1 (0-based): sample k uses outputs 2k and 2k+1.
  pure integer(int64) function mcpi_count_hits(seed, first, count) result(hits)
    integer(int64), intent(in) :: seed, first, count
    integer(int64) :: k
    real(real64) :: x, y

    hits = 0
    do k = first, first + count - 1
      x = real(shiftr(splitmix64_out(seed, 2_int64 * k), 11), real64) * two_pow_m53
      y = real(shiftr(splitmix64_out(seed, 2_int64 * k + 1_int64), 11), real64) * two_pow_m53
      if (x * x + y * y < 1.0_real64) hits = hits + 1
    end do
  end function mcpi_count_hits

  ! Hits of batch b (0-based): samples b*batch .. min((b+1)*batch, samples) - 1, by the scalar loop or
  ! the SIMD one as --inner says.
  integer(int64) function mcpi_batch_hits(p, b)
    type(sb_params), intent(in) :: p
    integer(int64), intent(in) :: b
    integer(int64) :: first

    first = b * p%batch
    if (p%inner == sb_inner_simd) then
      mcpi_batch_hits = sb_pi_hits_inner(p, first, first + min(p%batch, p%samples - first))
    else
      mcpi_batch_hits = mcpi_count_hits(p%seed, first, min(p%batch, p%samples - first))
    end if
  end function mcpi_batch_hits

  ! How many batches the samples make.
  pure integer(int64) function mcpi_batch_count(p)
    type(sb_params), intent(in) :: p

    mcpi_batch_count = (p%samples + p%batch - 1) / p%batch
  end function mcpi_batch_count

end module mcpi_hits
