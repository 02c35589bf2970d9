// step_control.comp (train::StepProgram): the step's decisions. It takes no
// push constants, so the shader has nothing to include from here; its
// buffers are the TrainState, the TrainParams and the step's reductions,
// ring and tables.
#ifndef VKAMP_INTERFACE_STEP_CONTROL_H
#define VKAMP_INTERFACE_STEP_CONTROL_H
#include "macros.h"

// state, params, partial_sq, partial_bad, loss, hist, hist_ring, ring,
// bias_correction, lr_table, tensor stats, tensor stats ring, auto_scale
VKAMP_SHADER_ONE_BUILD(StepControlShader, step_control, 13, void)

#endif
