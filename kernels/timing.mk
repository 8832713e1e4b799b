# Timing-precision kernel (kernels/timing): timing-c-serial on the common harness.
$(eval $(call c_kernel,timing,serial,))
