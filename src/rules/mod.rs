//! The rule engine (issue #3): placeholder until the engine lands.
