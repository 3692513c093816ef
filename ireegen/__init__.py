"""ireegen: turn IREE models into typed C libraries and CMake targets."""

__version__ = "0.1.0"
