//! Shared helpers for the command-line examples.
