//! Layer 3, **planning the cut**: where a list may be cut (head / middle / tail with the
//! tool-pair rule), what each strategy replaces or removes, the thinking policy for kept
//! turns, and shortening oversized tool results (offload). Pure functions of the messages
//! and plain values (a budget, an encoding, [`partition::TailRules`]); nothing here calls a
//! model or writes a file. Imports [`crate::base`], [`crate::model`].

pub mod offload;
pub mod partition;
pub mod selective;
pub mod strategy;
pub mod thinking;
