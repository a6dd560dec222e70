// Code of another crate of the tree that hands a user's settings on: it names the variants of
// context.rs's setting enums, which are thus no crate's own form (exclude/own-form).
pub fn resize(x: Image) -> Image {
    interpolate(x, InterpolateMode::Bilinear)
}
