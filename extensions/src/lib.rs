//! placeholder while the lifecycle points are written
