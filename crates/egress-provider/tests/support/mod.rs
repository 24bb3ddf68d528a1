//! What the integration tests share: identifiers, and reading validation errors.
#![allow(dead_code)] // each test binary uses part of it

use std::fmt::Debug;

use egress_provider::{ConfigError, FieldErrors, Identifier, Problem};

/// A valid identifier.
pub fn id(s: &str) -> Identifier {
    Identifier::new(s).unwrap()
}

/// The field errors of a load or build that must fail with `ConfigError::Invalid`.
#[track_caller]
pub fn invalid<T: Debug>(r: Result<T, ConfigError>) -> FieldErrors {
    match r {
        Ok(v) => panic!("expected errors, got {v:?}"),
        Err(ConfigError::Invalid(errors)) => errors,
        Err(other) => panic!("expected Invalid, got {other:?}"),
    }
}

/// The problem reported at `path`; fails listing every error when there is none.
#[track_caller]
pub fn assert_at<'a>(errors: &'a FieldErrors, path: &str) -> &'a Problem {
    match errors.at(path) {
        Some(e) => &e.problem,
        None => panic!("no error at {path}; got:\n{errors}"),
    }
}
