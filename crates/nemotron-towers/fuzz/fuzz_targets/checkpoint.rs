//! Safetensors bytes → `Checkpoint::from_bytes`, then every accessor on every tensor it lists.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nemotron_towers::Checkpoint;

fuzz_target!(|data: &[u8]| {
    let Ok(checkpoint) = Checkpoint::from_bytes("fuzz.safetensors", data.to_vec()) else { return };
    let _ = checkpoint.metadata();
    let names: Vec<String> = checkpoint.names().map(str::to_owned).collect();
    for name in &names {
        let _ = checkpoint.tensor(name);
        let _ = checkpoint.f32(name);
        let _ = checkpoint.f64(name);
        let _ = checkpoint.bf16(name);
        let _ = checkpoint.shape(name);
    }
    // Present with the right shape, present with the wrong one, absent.
    let mut expected = vec![("absent".to_owned(), vec![2, 3])];
    for name in names.iter().take(4) {
        expected.push((name.clone(), vec![4]));
        if let Ok(Some(shape)) = checkpoint.shape(name) {
            expected.push((name.clone(), shape));
        }
    }
    let _ = checkpoint.check(&expected);
});
