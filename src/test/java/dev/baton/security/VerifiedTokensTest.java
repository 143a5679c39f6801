package dev.baton.security;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.quarkus.security.identity.SecurityIdentity;

/** A verified token is reused for a minute at most, never past its exp, and the cache stays bounded. */
class VerifiedTokensTest {

    private final AtomicLong now = new AtomicLong(1_000_000);
    private final VerifiedTokens tokens = new VerifiedTokens(now::get);
    private final SecurityIdentity orders = CallerIdentity.of("sa", new Caller("orders", false));

    @Test
    void given_a_verified_token_then_it_is_reused_for_a_minute_and_no_longer() {
        tokens.put("a", orders, now.get() + 3_600_000);
        now.addAndGet(VerifiedTokens.TTL_MS - 1);
        assertThat(tokens.get("a")).isSameAs(orders);
        now.addAndGet(1);
        assertThat(tokens.get("a")).isNull();
    }

    @Test
    void given_a_token_about_to_expire_then_it_is_not_reused_past_its_exp() {
        tokens.put("a", orders, now.get() + 5_000);
        now.addAndGet(4_999);
        assertThat(tokens.get("a")).isSameAs(orders);
        now.addAndGet(1);
        assertThat(tokens.get("a")).isNull();
        tokens.put("b", orders, now.get()); // already at exp: verified again every time
        assertThat(tokens.get("b")).isNull();
    }

    @Test
    void given_more_tokens_than_the_bound_then_the_cache_does_not_grow_past_it() {
        for (int i = 0; i < VerifiedTokens.MAX_ENTRIES + 500; i++) {
            tokens.put("t" + i, orders, now.get() + 3_600_000);
        }
        assertThat(tokens.size()).isLessThanOrEqualTo(VerifiedTokens.MAX_ENTRIES);
        assertThat(tokens.get("t" + (VerifiedTokens.MAX_ENTRIES + 499))).isSameAs(orders);
    }

    @Test
    void an_unknown_token_is_not_known() {
        assertThat(tokens.get("never-seen")).isNull();
    }
}
