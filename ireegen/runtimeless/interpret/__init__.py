"""The runtimeless interpreter: runs a compiled program's host code at emit
time and records its schedule (schedule.py).

Runtimeless C has no VM to run the program's host code, so ireegen runs that
host code here, once, at emit time.  `read_schedule()` (read.py) interprets
the initializers and each exported function of the `--compile-to=hal`
output over abstract values: integers are known, the function's tensors are
"the caller's input i", buffers are allocations with a size, and scalar
arguments are C expressions.  What the device would have been asked to do
(dispatches, fills, copies) is recorded in program order, which is a valid
serial order: IREE issues queue work in dependency order.

Initializers run first: their work goes into `init_steps` and what they
allocate into the state region.  A mutable global that holds a buffer gets a
fixed slot there; a call that stores a new buffer into it is followed by a
copy into the slot.  The globals' values after a call may differ from those
before it (a size recorded next to the buffer, say): each distinct state is a
state version, and a function has one schedule per version it can start from.

The parts:
- interpreter.py: the interpreter's state (globals, allocations, the steps
  so far), the walk over a region's blocks, and the helpers handlers share;
  it looks each op up in one table, and refuses an op it does not find,
  naming the op and where it is;
- ops/: that table, one module per dialect (arith, math, util, func, cf,
  hal), each exporting `OPS = {op name: handler}`, as MLIR groups its
  patterns; ops/__init__.py merges them;
- values.py: the values only the interpreter sees (tensor views, device
  tokens, command buffers, executables) and the terminators' transfers;
- attrs.py, constants.py: reading op attributes and constant data;
- read.py: `read_schedule`, the initializers, the state versions and each
  function's schedule.

Anything the interpretation cannot pin down at emit time (a branch on a
value only known at run time, a size that depends on an argument, a read of
device data on the host, an op it does not know) is refused with a
RuntimelessError naming the function and the op.
"""
