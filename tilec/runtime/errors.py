"""`triton.runtime.errors`' names, for programs that import or catch them
(`from triton.runtime.errors import OutOfResources` around an autotuning loop): each is
the tilec error raised in that case."""
from ..errors import LaunchError, OutOfResources, TilecError, ToolkitError, UserError

TritonError = TilecError        # the base of tilec's errors
PTXASError = ToolkitError       # ptxas refusing a kernel
AutotunerError = LaunchError    # none of an @autotune's configs can run here
InterpreterError = UserError    # what a kernel run in the interpreter raises (out-of-bounds access,
                                # a failed device assert, ...): a broader net than Triton's

__all__ = ["AutotunerError", "InterpreterError", "OutOfResources", "PTXASError", "TritonError"]
