use hookpoint::extensible;

pub struct Counter {
    pub n: u32,
}

#[extensible]
impl Counter {
    #[extensible]
    pub fn bump(&mut self) -> &u32 {
        self.n += 1;
        &self.n
    }
}

fn main() {}
