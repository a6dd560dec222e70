; Enum definitions: the dtype catalog (DType, FloatDType, ...) is read from these, not hard-coded.
(enum_item
  name: (type_identifier) @name
  body: (enum_variant_list) @variants) @enum
