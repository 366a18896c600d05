//! Dumps a checkpoint.
fn main() {
    let path = std::env::args().nth(1).unwrap();
    let bytes = std::fs::read(path).unwrap();
    let c = tensor_pytorch::Checkpoint::open(&bytes, &Default::default()).unwrap();
    for t in &c.tensors {
        let v = c.view_of(t).unwrap();
        println!("{t:?} {:?} {:?}", v.strides(), v.to_tensor().data());
    }
}
