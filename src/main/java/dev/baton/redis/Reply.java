package dev.baton.redis;

import io.vertx.mutiny.redis.client.Response;
import io.vertx.redis.client.ResponseType;

/**
 * A script's reply as the protocol code reads it: an array of texts, numbers and nested arrays,
 * without the Redis client's types. Missing elements and Redis nils read as null.
 */
public final class Reply {

    private final Response response;

    Reply(Response response) {
        this.response = response;
    }

    public int size() {
        return response == null ? 0 : response.size();
    }

    /** The element as text, or null when it is absent or nil (false in Lua). */
    public String text(int index) {
        Response element = element(index);
        return element == null ? null : element.toString();
    }

    public long number(int index) {
        return element(index).toLong();
    }

    /** A nested array, or null when the element is absent or not an array. */
    public Reply array(int index) {
        Response element = element(index);
        return element != null && element.type() == ResponseType.MULTI ? new Reply(element) : null;
    }

    /** The statistics tail that ends the reply of a state-changing script ({@link LuaScript#changesState()}). */
    public ScriptStats stats() {
        return ScriptStats.of(this);
    }

    private Response element(int index) {
        return index < size() ? response.get(index) : null;
    }
}
