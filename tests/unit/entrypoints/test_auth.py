"""Bearer auth: the HS256 verifier, the OAuth verifier and its JWKS cache, the settings.

The JWKS cache fetches from `tests.support.oauth_issuer.FakeIssuer` over real HTTP on
127.0.0.1; time is a clock the test moves, so TTL and rate limits are asserted by fetch counts,
never by sleeping.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from typing import Any

import httpx
import jwt
import pytest
from pydantic import ValidationError

from biomcp.entrypoints.http.auth import (
    AuthUnavailableError,
    BearerAuth,
    BearerChallenge,
    RequireBearer,
    UnknownKeyError,
    token_problem,
)
from biomcp.entrypoints.http.gate import bind_refusal
from biomcp.entrypoints.http.oauth import (
    JwksCache,
    OAuthVerifier,
    configured_auth,
    metadata_candidates,
    protected_resource_metadata,
    resource_metadata_url,
)
from biomcp.entrypoints.settings import Settings, format_settings_error
from tests.support.oauth_issuer import AUDIENCE, FakeIssuer

SECRET = "unit-test-secret-0123456789-abcdefghijklmnop"  # noqa: S105 - a test key
OAUTH = {
    "mcp_auth_issuer": "https://as.example",
    "mcp_auth_audience": AUDIENCE,
    "mcp_auth_resource_url": AUDIENCE,
}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def issuer() -> Iterator[FakeIssuer]:
    with FakeIssuer() as fake:
        fake.make_key("rsa-1", "RS256")
        fake.make_key("ec-1", "ES256")
        fake.publish("rsa-1", "ec-1")
        yield fake


def cache(issuer: FakeIssuer, clock: Clock, **options: Any) -> JwksCache:
    return JwksCache(issuer=issuer.issuer, clock=clock, **options)


def hs256(**claims: Any) -> str:
    now = int(time.time())
    return jwt.encode({"sub": "s", "exp": now + 600, **claims}, SECRET, algorithm="HS256")


# --- the JWKS cache ------------------------------------------------------------------------------


def test_keys_are_discovered_fetched_once_and_refetched_after_the_ttl(issuer: FakeIssuer) -> None:
    clock = Clock()
    keys = cache(issuer, clock, ttl_s=300)

    async def scenario() -> None:
        assert (await keys.signing_key("rsa-1")).algorithm_name == "RS256"
        assert (await keys.signing_key("ec-1")).algorithm_name == "ES256"
        assert issuer.jwks_fetches == 1
        assert issuer.hits["/.well-known/oauth-authorization-server"] == 1
        assert keys.jwks_url == issuer.jwks_url
        clock.now += 299
        await keys.signing_key("rsa-1")
        assert issuer.jwks_fetches == 1
        clock.now += 1
        await keys.signing_key("rsa-1")
        assert issuer.jwks_fetches == 2
        assert issuer.hits["/.well-known/oauth-authorization-server"] == 1  # discovered once

    asyncio.run(scenario())


def test_an_unknown_kid_refreshes_once_per_interval(issuer: FakeIssuer) -> None:
    clock = Clock()
    keys = cache(issuer, clock, unknown_kid_refresh_s=60)

    async def scenario() -> None:
        await keys.signing_key("rsa-1")
        issuer.make_key("rsa-2", "RS256")
        issuer.publish("rsa-2")  # rotation
        assert (await keys.signing_key("rsa-2")).key_id == "rsa-2"
        assert issuer.jwks_fetches == 2
        for kid in ["nope-1", "nope-2", "rsa-1"]:  # rsa-1 was retired by the rotation
            with pytest.raises(UnknownKeyError):
                await keys.signing_key(kid)
        assert issuer.jwks_fetches == 2
        clock.now += 60
        with pytest.raises(UnknownKeyError):
            await keys.signing_key("nope-3")
        assert issuer.jwks_fetches == 3

    asyncio.run(scenario())


def test_concurrent_requests_share_one_fetch(issuer: FakeIssuer) -> None:
    keys = cache(issuer, Clock())

    async def scenario() -> None:
        found = await asyncio.gather(*(keys.signing_key("ec-1") for _ in range(20)))
        assert {key.key_id for key in found} == {"ec-1"}

    asyncio.run(scenario())
    assert issuer.jwks_fetches == 1


def test_concurrent_tokens_with_a_new_kid_all_wait_for_the_one_refresh(
    issuer: FakeIssuer,
) -> None:
    keys = cache(issuer, Clock())

    async def scenario() -> None:
        await keys.signing_key("rsa-1")
        issuer.make_key("ec-2", "ES256")
        issuer.publish("ec-2")
        found = await asyncio.gather(*(keys.signing_key("ec-2") for _ in range(10)))
        assert {key.key_id for key in found} == {"ec-2"}

    asyncio.run(scenario())
    assert issuer.jwks_fetches == 2


def test_a_token_without_kid_uses_the_only_key(issuer: FakeIssuer) -> None:
    keys = cache(issuer, Clock())

    async def scenario() -> None:
        with pytest.raises(UnknownKeyError):  # two keys: which one?
            await keys.signing_key(None)
        issuer.publish("ec-1")
        keys2 = cache(issuer, Clock())
        assert (await keys2.signing_key(None)).key_id == "ec-1"

    asyncio.run(scenario())


def test_an_oversized_jwks_is_refused_and_the_old_keys_stay(issuer: FakeIssuer) -> None:
    clock = Clock()
    keys = cache(issuer, clock, ttl_s=10, max_bytes=20_000, failure_backoff_s=5)

    async def scenario() -> None:
        await keys.signing_key("rsa-1")
        issuer.jwks_padding = 50_000
        clock.now += 10
        assert (await keys.signing_key("rsa-1")).key_id == "rsa-1"  # stale keys still serve
        assert issuer.jwks_fetches == 2
        clock.now += 1
        await keys.signing_key("rsa-1")
        assert issuer.jwks_fetches == 2  # backing off after the failure
        clock.now += 5
        await keys.signing_key("rsa-1")
        assert issuer.jwks_fetches == 3

    asyncio.run(scenario())


def test_no_reachable_keys_is_unavailable_not_a_refusal(issuer: FakeIssuer) -> None:
    issuer.jwks_padding = 400_000  # over the default bound

    async def scenario() -> None:
        with pytest.raises(AuthUnavailableError):
            await cache(issuer, Clock()).signing_key("rsa-1")
        # metadata of another issuer is not trusted (RFC 8414 §3.3)
        wrong = JwksCache(issuer=issuer.issuer + "/tenant", clock=Clock())
        with pytest.raises(AuthUnavailableError):
            await wrong.signing_key("rsa-1")

    asyncio.run(scenario())


def test_metadata_locations_follow_the_mcp_spec() -> None:
    assert metadata_candidates("https://as.example") == [
        "https://as.example/.well-known/oauth-authorization-server",
        "https://as.example/.well-known/openid-configuration",
    ]
    assert metadata_candidates("https://as.example/tenant/") == [
        "https://as.example/.well-known/oauth-authorization-server/tenant",
        "https://as.example/.well-known/openid-configuration/tenant",
        "https://as.example/tenant/.well-known/openid-configuration",
    ]
    assert (
        resource_metadata_url("https://biomcp.example/mcp")
        == "https://biomcp.example/.well-known/oauth-protected-resource/mcp"
    )


# --- the OAuth verifier --------------------------------------------------------------------------


def verifier(issuer: FakeIssuer) -> OAuthVerifier:
    keys = JwksCache(issuer=issuer.issuer, jwks_url=issuer.jwks_url, clock=Clock())
    return OAuthVerifier(issuer=issuer.issuer, audience=AUDIENCE, keys=keys)


def refusal(issuer: FakeIssuer, token: str) -> str:
    async def scenario() -> str:
        with pytest.raises(jwt.InvalidTokenError) as caught:
            await verifier(issuer).authenticate(token)
        return token_problem(caught.value, ("RS256", "ES256"))

    return asyncio.run(scenario())


@pytest.mark.parametrize("kid", ["rsa-1", "ec-1"])
def test_valid_tokens_become_principals_with_their_scopes(issuer: FakeIssuer, kid: str) -> None:
    token = issuer.token(kid, scope="biomcp:read biomcp:write", sub="alice")
    principal = asyncio.run(verifier(issuer).authenticate(token))
    assert principal.subject == "alice"
    assert principal.client_id == "test-client"
    assert principal.scopes == ["biomcp:read", "biomcp:write"]
    assert principal.claims == {"iss": issuer.issuer}


def test_an_audience_list_containing_ours_is_accepted(issuer: FakeIssuer) -> None:
    token = issuer.token("rsa-1", aud=["https://other.example", AUDIENCE])
    assert asyncio.run(verifier(issuer).authenticate(token)).subject == "user-1"


@pytest.mark.parametrize(
    ("claims", "drop", "reason"),
    [
        ({}, ("exp",), "no 'exp' claim (it is required)"),
        ({}, ("iss",), "no 'iss' claim (it is required)"),
        ({}, ("aud",), "no 'aud' claim (it is required)"),
        ({"aud": "https://other.example"}, (), "wrong audience (aud)"),
        ({"iss": "https://as.example"}, (), "wrong issuer (iss)"),
        ({"exp": 1_000_000}, (), "expired"),
    ],
)
def test_claims_are_required_and_checked(
    issuer: FakeIssuer, claims: dict[str, Any], drop: tuple[str, ...], reason: str
) -> None:
    assert refusal(issuer, issuer.token("ec-1", drop=drop, **claims)) == reason


def test_a_key_of_another_type_than_the_header_says_is_refused(issuer: FakeIssuer) -> None:
    token = issuer.token("rsa-1")
    forged_header = jwt.utils.base64url_encode(b'{"alg":"ES256","kid":"rsa-1","typ":"JWT"}')
    forged = forged_header.decode() + token[token.index(".") :]
    assert refusal(issuer, forged) == "algorithm not allowed (RS256, ES256 only)"


def test_other_algorithms_never_fetch_keys(issuer: FakeIssuer) -> None:
    token = jwt.encode({"exp": int(time.time()) + 60}, SECRET, algorithm="HS256")
    assert refusal(issuer, token) == "algorithm not allowed (RS256, ES256 only)"
    assert issuer.jwks_fetches == 0


# --- HS256 ---------------------------------------------------------------------------------------


def test_hs256_requires_exp() -> None:
    auth = BearerAuth(SECRET)
    with pytest.raises(jwt.MissingRequiredClaimError) as caught:
        auth.verify(jwt.encode({"sub": "s"}, SECRET, algorithm="HS256"))
    assert token_problem(caught.value) == "no 'exp' claim (it is required)"
    assert auth.verify(hs256())["sub"] == "s"
    assert auth.verify(hs256(aud="anything"))["aud"] == "anything"  # no audience configured


def test_hs256_checks_iss_and_aud_when_configured() -> None:
    auth = BearerAuth(SECRET, issuer="https://me.example", audience="biomcp")
    assert auth.verify(hs256(iss="https://me.example", aud="biomcp"))["sub"] == "s"
    for claims, error in [
        ({"aud": "biomcp"}, jwt.MissingRequiredClaimError),
        ({"iss": "https://me.example"}, jwt.MissingRequiredClaimError),
        ({"iss": "https://me.example", "aud": "other"}, jwt.InvalidAudienceError),
        ({"iss": "https://evil.example", "aud": "biomcp"}, jwt.InvalidIssuerError),
    ]:
        with pytest.raises(error):
            auth.verify(hs256(**claims))


def test_hs256_maps_the_older_write_scope() -> None:
    auth = BearerAuth(SECRET)
    assert asyncio.run(auth.authenticate(hs256(scope="read write"))).scopes == [
        "biomcp:write",
        "read",
        "write",
    ]
    assert asyncio.run(auth.authenticate(hs256())).scopes == []


# --- challenge, metadata, settings ---------------------------------------------------------------


def test_the_challenge_quotes_only_safe_text() -> None:
    challenge = BearerChallenge(
        hint="x", resource_metadata="https://r.example/.well-known/x", required_scope="s"
    )
    assert challenge.header("invalid_token", 'bad "quoted"\\ text\n') == (
        'Bearer realm="bio-mcp", error="invalid_token", error_description="bad quoted text", '
        'scope="s", resource_metadata="https://r.example/.well-known/x"'
    )


def test_the_metadata_document_offers_only_reading_on_a_read_only_server() -> None:
    settings = Settings(_env_file=None, biomcp_read_only=True, **OAUTH)  # type: ignore[arg-type]
    document = protected_resource_metadata(settings)
    assert document["scopes_supported"] == ["biomcp:read"]
    assert document["authorization_servers"] == ["https://as.example"]


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"mcp_auth_issuer": "https://as.example"}, "MCP_AUTH_AUDIENCE, MCP_AUTH_RESOURCE_URL"),
        ({"mcp_auth_audience": "x"}, "set MCP_AUTH_ISSUER, MCP_AUTH_RESOURCE_URL"),
        ({"mcp_auth_jwks_url": "https://as.example/jwks"}, "half-configured"),
        ({"mcp_auth_secret_key": SECRET, "mcp_auth_jwks_url": "https://a.example/j"}, "one"),
        ({**OAUTH, "mcp_auth_issuer": "http://as.example"}, "MCP_AUTH_ISSUER: Value error"),
        ({**OAUTH, "mcp_auth_jwks_url": "ftp://as.example/j"}, "MCP_AUTH_JWKS_URL"),
    ],
)
def test_half_configured_oauth_is_a_clear_error(values: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        Settings(_env_file=None, **values)
    assert message in format_settings_error(caught.value)
    assert SECRET not in format_settings_error(caught.value)


def test_the_auth_mode_follows_the_settings() -> None:
    assert Settings(_env_file=None).auth_mode == "none"
    assert Settings(_env_file=None, mcp_auth_secret_key=SECRET).auth_mode == "hs256"
    keyed = Settings(
        _env_file=None,
        mcp_auth_secret_key=SECRET,
        mcp_auth_issuer="https://me.example",
        mcp_auth_audience="biomcp",
    )
    assert keyed.auth_mode == "hs256"  # HS256 checking iss and aud
    assert Settings(_env_file=None, **OAUTH).auth_mode == "oauth"  # type: ignore[arg-type]
    local = Settings(
        _env_file=None,
        mcp_auth_issuer="http://127.0.0.1:9000",
        mcp_auth_audience="a",
        mcp_auth_resource_url="http://localhost:8000/mcp",
    )
    assert local.auth_mode == "oauth"
    configured = configured_auth(local)
    assert configured is not None
    assert isinstance(configured.verifier, OAuthVerifier)
    assert configured.challenge.required_scope == "biomcp:read"


def test_a_public_bind_needs_an_auth_mode() -> None:
    public = {"mcp_http_host": "0.0.0.0"}  # noqa: S104
    refusal = bind_refusal(Settings(_env_file=None, **public), insecure=False)  # type: ignore[arg-type]
    assert refusal is not None
    assert "MCP_AUTH_ISSUER" in refusal
    assert "MCP_AUTH_SECRET_KEY" in refusal
    oauth = Settings(_env_file=None, **public, **OAUTH)  # type: ignore[arg-type]
    assert bind_refusal(oauth, insecure=False) is None
    keyed = Settings(_env_file=None, **public, mcp_auth_secret_key=SECRET)  # type: ignore[arg-type]
    assert bind_refusal(keyed, insecure=False) is None


def test_keys_out_of_reach_answer_503_not_401(issuer: FakeIssuer) -> None:
    """A token that cannot be checked is the server's problem: 503 with Retry-After, so
    clients do not throw their tokens away."""
    issuer.jwks_padding = 400_000  # over the size bound: every fetch fails
    reached: list[object] = []

    async def inner(scope: Any, receive: Any, send: Any) -> None:  # pragma: no cover
        reached.append(scope)

    challenge = BearerChallenge(hint="x", required_scope="biomcp:read")
    guarded = RequireBearer(inner, verifier(issuer), challenge)

    async def scenario() -> httpx.Response:
        transport = httpx.ASGITransport(app=guarded)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            return await http.post(
                "/mcp", headers={"Authorization": f"Bearer {issuer.token('rsa-1')}"}
            )

    response = asyncio.run(scenario())
    assert response.status_code == 503
    assert response.headers["retry-after"] == "5"
    assert response.json()["error"] == "temporarily_unavailable"
    assert reached == []
    assert issuer.jwks_fetches == 1
