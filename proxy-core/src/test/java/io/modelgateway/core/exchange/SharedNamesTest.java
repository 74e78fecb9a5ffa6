package io.modelgateway.core.exchange;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.netty.util.AsciiString;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class SharedNamesTest {
    private static final AsciiString HOST = AsciiString.cached("host");
    private static final AsciiString DATE = AsciiString.cached("date");
    private static final AsciiString AUTH = AsciiString.cached("authorization");
    private final SharedNames names = new SharedNames(HOST, DATE, AUTH);

    @Test
    void aNameSpelledExactly_isItsConstant_atAnyOffset() {
        byte[] line = "xxhostdateauthorization".getBytes(StandardCharsets.US_ASCII);
        assertThat((Object) names.find(line, 2, 4)).isSameAs(HOST);
        assertThat((Object) names.find(line, 6, 4)).isSameAs(DATE);
        assertThat((Object) names.find(line, 10, 13)).isSameAs(AUTH);
    }

    @Test
    void anotherCase_anotherLength_orOtherBytes_isNone() {
        byte[] line = "Host hosts hast authorizatio".getBytes(StandardCharsets.US_ASCII);
        assertThat((Object) names.find(line, 0, 4)).isNull(); // Host
        assertThat((Object) names.find(line, 5, 5)).isNull(); // hosts
        assertThat((Object) names.find(line, 11, 4)).isNull(); // hast
        assertThat((Object) names.find(line, 16, 12)).isNull(); // authorizatio
        assertThat((Object) names.find("dost hosd".getBytes(StandardCharsets.US_ASCII), 0, 4)).isNull(); // first byte
        assertThat((Object) names.find("dost hosd".getBytes(StandardCharsets.US_ASCII), 5, 4)).isNull(); // last byte
        assertThat((Object) names.find("hxst".getBytes(StandardCharsets.US_ASCII), 0, 4)).isNull(); // inside
        assertThat((Object) names.find(new byte[64], 0, 64)).isNull(); // longer than every name
        assertThat((Object) names.find(new byte[0], 0, 0)).isNull();
    }

    @Test
    void aNameGivenTwice_isRefused() {
        assertThatThrownBy(() -> new SharedNames(HOST, AsciiString.cached("host")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("host");
        assertThatThrownBy(() -> new SharedNames(AsciiString.EMPTY_STRING)).isInstanceOf(IllegalArgumentException.class);
    }
}
