pub mod audio;
pub mod frontend;
mod mel;
