//! `PointSpec` ties a payload type to the handler key dispatch trusts: an impl written by hand
//! must be `unsafe impl` (what `point!` writes), so safe code cannot make dispatch cast a
//! payload to the wrong type.
struct Lying;

impl hookpoint::PointSpec for Lying {
    type Payload<'a> = u64;
    type Handler = fn(&mut String);
    const NAME: &'static str = "lying";
    fn payload_type() -> &'static str {
        "u64"
    }
}

fn main() {}
