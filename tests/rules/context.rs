pub enum DType {
    F64,
    F32,
    Flex32,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U64,
    U32,
    U16,
    U8,
    Bool(BoolStore),
    QFloat(QuantScheme),
}

pub enum FloatDType {
    F64,
    F32,
    F16,
    BF16,
}

pub enum IntDType {
    I64,
    I32,
    U8,
}

pub enum BoolStore {
    Native,
    U8,
    U32,
}

pub type BoolDType = BoolStore;

pub enum StorageTensor {
    F64(Vec<f64>),
    F32(Vec<f32>),
    I64(Vec<i64>),
    I32(Vec<i32>),
    I16(Vec<i16>),
    U8(Vec<u8>),
    Bool(Vec<bool>),
}

pub enum InterpolateMode {
    Nearest,
    NearestExact,
    Bilinear,
}

pub enum Constant {
    Float32(f32),
    Float64(f64),
    Int64(i64),
    Bool(bool),
}

// The tree's own operation traits, which the cases implement: their stubs are operations users call.
pub trait QuantOps {}
pub trait ModuleOps {}
pub trait Backend {}
