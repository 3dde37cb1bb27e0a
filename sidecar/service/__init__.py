"""The gRPC edge: protobuf in and out, typed domain objects inside."""
