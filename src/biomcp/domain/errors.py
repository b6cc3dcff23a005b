"""The domain's own errors. Each is a ValueError: the caller passed a value the rules reject."""


class DomainError(ValueError):
    """Base of every error the pure domain raises."""


class InvalidRecordError(DomainError):
    """A record (or part of one) breaks an invariant: a malformed PMID, a naive datetime..."""


class InvalidConfigError(DomainError):
    """A scoring, chunking or rerank configuration is out of its allowed range."""


class InvalidQueryError(DomainError):
    """A query template was given a term it cannot express in PubMed syntax."""
