use onnx_bcast::infer::{self, Options};
use onnx_bcast::{io, rewrite};
use std::path::Path;
use std::time::Instant;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = Path::new(&args[1]);
    let n: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(30);
    let mut t = vec![vec![]; 6];
    for _ in 0..n {
        let a = Instant::now();
        let bytes = std::fs::read(path).unwrap();
        let b = Instant::now();
        let mut m = io::decode(&bytes, path, path.parent()).unwrap();
        let c = Instant::now();
        let mut inf = infer::infer(&m, &Options::default());
        let d = Instant::now();
        rewrite::annotate_taking(&mut m, &mut inf);
        let e = Instant::now();
        let enc = io::encode(&m);
        let f = Instant::now();
        drop((m, inf, bytes, enc));
        let g = Instant::now();
        for (i, (x, y)) in [(a, b), (b, c), (c, d), (d, e), (e, f), (f, g)].iter().enumerate() {
            t[i].push((*y - *x).as_secs_f64() * 1e3);
        }
    }
    for (i, name) in ["read", "decode", "infer", "annotate", "encode", "drop"].iter().enumerate() {
        let mut v = t[i].clone();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        println!("{name:>8} first {:.3} median {:.3} min {:.3} ms", t[i][0], v[v.len() / 2], v[0]);
    }
}
