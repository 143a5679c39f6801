package dev.baton.testing;

import static io.restassured.RestAssured.given;

import java.util.LinkedHashMap;
import java.util.Map;

import io.restassured.http.ContentType;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

/** The protocol as a client sees it, every response checked against openapi.yaml. */
public final class Api {

    private Api() {
    }

    public static RequestSpecification client() {
        return given().filter(Contract.FILTER).contentType(ContentType.JSON).accept(ContentType.JSON);
    }

    public static Response acquire(String lcid, String requestId) {
        return acquire(lcid, fields("requestId", requestId));
    }

    public static Response acquire(String lcid, Map<String, Object> body) {
        return client().body(body).post("/v1/locks/{lcid}/acquire", lcid);
    }

    public static Response complete(String lcid, String token, String requestId) {
        return client().body(fields("token", token, "requestId", requestId)).post("/v1/locks/{lcid}/complete", lcid);
    }

    public static Response complete(String lcid, Map<String, Object> body) {
        return client().body(body).post("/v1/locks/{lcid}/complete", lcid);
    }

    public static Response heartbeat(String lcid, Map<String, Object> body) {
        return client().body(body).post("/v1/locks/{lcid}/heartbeat", lcid);
    }

    public static Response abort(String lcid, Map<String, Object> body) {
        return client().body(body).post("/v1/locks/{lcid}/abort", lcid);
    }

    public static JsonPath lock(String lcid) {
        return client().get("/v1/locks/{lcid}", lcid).then().statusCode(200).extract().jsonPath();
    }

    public static Response request(String lcid, String requestId) {
        return client().get("/v1/locks/{lcid}/requests/{requestId}", lcid, requestId);
    }

    /** An ordered map of alternating names and values, for JSON bodies. */
    public static Map<String, Object> fields(Object... namesAndValues) {
        Map<String, Object> map = new LinkedHashMap<>();
        for (int i = 0; i < namesAndValues.length; i += 2) {
            map.put((String) namesAndValues[i], namesAndValues[i + 1]);
        }
        return map;
    }

    /** A name no other test uses, so tests share one Redis without seeing each other. */
    public static String unique(String prefix) {
        return prefix + "-" + java.util.UUID.randomUUID().toString().substring(0, 12);
    }
}
