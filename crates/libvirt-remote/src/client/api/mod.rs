//! What a program calls: the object handles, event subscriptions, stream handles, migration
//! and the errors they return.

pub(crate) mod calls;
pub(crate) mod errors;
pub(crate) mod events;
pub mod handles;
pub(crate) mod methods;
pub(crate) mod migrate;
pub(crate) mod pool;
pub(crate) mod stream;
#[cfg(feature = "xml")]
pub mod xml;
