//! Helpers shared by the behaviour tests.
