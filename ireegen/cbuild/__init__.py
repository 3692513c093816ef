"""Building and running emitted C: host, cross and bare-metal toolchains, the runner behind `ireegen run`, and the footprint behind `ireegen size`."""
