from analyzer.decisions.call import Call, cached_fact


class _Counted:
    def __init__(self, base: int):
        self.base, self.runs = base, 0

    @cached_fact
    def value(self) -> list[int]:
        """The base, in a list."""
        self.runs += 1
        return [self.base]


def test_cached_fact_works_out_once_per_instance():
    a, b = _Counted(1), _Counted(2)
    first = a.value
    assert a.value is first and first == [1]
    assert a.runs == 1
    assert b.value == [2] and b.runs == 1  # each instance its own value
    assert a.__dict__["value"] is first


def test_cached_fact_on_the_class_is_the_descriptor():
    assert isinstance(_Counted.value, cached_fact)
    assert _Counted.value.__doc__ == "The base, in a list."
    assert isinstance(Call.named_variants, cached_fact)
