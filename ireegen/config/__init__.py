"""What to build: the tables of execution models, executable and module formats, targets and bare-metal cores, and the iree-compile flags each implies."""
