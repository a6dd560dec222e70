; Type aliases: `pub type BoolDType = BoolStore;` makes BoolDType a dtype enum too.
(type_item
  name: (type_identifier) @name
  type: (_) @target) @alias
