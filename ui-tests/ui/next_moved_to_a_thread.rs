use hookpoint::{Error, Next, extension};

#[extension(point = "model.call")]
fn spawns(req: &mut String, mut next: Next<'_, String, String>) -> Result<String, Error> {
    let mut req = req.clone();
    std::thread::spawn(move || next.run(&mut req)).join().unwrap()
}

fn main() {}
