//! Network procedures.

use crate::procedures;

procedures! {
    table PROCEDURES;
}
