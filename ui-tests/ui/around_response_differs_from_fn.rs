use hookpoint::{CallArgs, Error, Next, extensible, extension};

#[extensible]
pub fn answer(question: String) -> String {
    question
}

// The around point's response is the fn's return type, `String`.
#[extension(point = ANSWER_AROUND)]
fn wraps(
    req: &mut CallArgs<(String,)>,
    mut next: Next<'_, CallArgs<(String,)>, usize>,
) -> Result<usize, Error> {
    next.run(req)
}

fn main() {}
