package bookinfo.reviews;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * A minimal HTTP/1.1 client on one raw socket, so tests see exactly what goes over the wire:
 * framing headers, Connection: close, and whether the server really closes.
 */
public final class RawHttp implements Closeable {

    public record Response(
            int status, Map<String, List<String>> headers, byte[] body, boolean framed) {

        public String header(String name) {
            List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
            return values == null ? null : String.join(",", values);
        }

        public String text() {
            return new String(body, StandardCharsets.UTF_8);
        }
    }

    /**
     * Everything the server sent for some raw bytes: its text (ISO-8859-1), whether it closed the
     * connection, and the time from the end of the request to the close or the last byte.
     */
    public record Exchange(String text, boolean closed, long millis) {

        /** A status line, wherever it starts: after a body without a newline too. */
        private static final Pattern STATUS_LINE = Pattern.compile("HTTP/1\\.1 \\d{3} ");

        /** Status lines in the output: how many responses the server wrote. */
        public int responses() {
            return (int) STATUS_LINE.matcher(text).results().count();
        }

        /** The status of the first response, or -1 when there was none. */
        public int status() {
            return text.startsWith("HTTP/1.1 ") ? Integer.parseInt(text.substring(9, 12)) : -1;
        }
    }

    /**
     * Sends raw bytes on a fresh connection and reads until the server closes it, nothing more has
     * come for quietMillis after the last byte received, or maxMillis have passed.
     */
    public static Exchange exchange(int port, byte[] request, int quietMillis, int maxMillis)
            throws IOException {
        try (Socket socket = new Socket("127.0.0.1", port)) {
            socket.getOutputStream().write(request);
            socket.getOutputStream().flush();
            return collect(socket, quietMillis, maxMillis);
        }
    }

    public static Exchange exchange(int port, String request) throws IOException {
        return exchange(port, request.getBytes(StandardCharsets.ISO_8859_1), 1500, 8000);
    }

    /** What the server sends on an open socket from now on (see exchange). */
    public static Exchange collect(Socket socket, int quietMillis, int maxMillis)
            throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        long start = System.nanoTime();
        long last = start;
        boolean closed = false;
        byte[] buffer = new byte[8192];
        InputStream in = socket.getInputStream();
        while (true) {
            long now = System.nanoTime();
            long left = maxMillis - (now - start) / 1_000_000;
            if (got.size() > 0) {
                left = Math.min(left, quietMillis - (now - last) / 1_000_000);
            }
            if (left <= 0) {
                break;
            }
            socket.setSoTimeout((int) left);
            int n;
            try {
                n = in.read(buffer);
            } catch (SocketTimeoutException e) {
                continue;
            } catch (IOException e) {
                closed = true; // reset
                last = System.nanoTime();
                break;
            }
            last = System.nanoTime();
            if (n == -1) {
                closed = true;
                break;
            }
            got.write(buffer, 0, n);
        }
        return new Exchange(
                got.toString(StandardCharsets.ISO_8859_1), closed, (last - start) / 1_000_000);
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    public RawHttp(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(5000);
        in = socket.getInputStream();
        out = socket.getOutputStream();
    }

    /** One request on a fresh connection, closed afterwards. */
    public static Response once(int port, String method, String path, String... headerLines)
            throws IOException {
        try (RawHttp http = new RawHttp(port)) {
            return http.request(method, path, headerLines);
        }
    }

    public Response request(String method, String path, String... headerLines) throws IOException {
        send(method, path, headerLines);
        return read("HEAD".equals(method));
    }

    public void send(String method, String path, String... headerLines) throws IOException {
        StringBuilder request =
                new StringBuilder(method)
                        .append(' ')
                        .append(path)
                        .append(" HTTP/1.1\r\n")
                        .append("Host: 127.0.0.1\r\n");
        for (String line : headerLines) {
            request.append(line).append("\r\n");
        }
        out.write(request.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
    }

    public Response read(boolean head) throws IOException {
        String statusLine = line();
        if (statusLine == null) {
            throw new IOException("connection closed before a response");
        }
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, List<String>> headers = new TreeMap<>();
        for (String line = line(); line != null && !line.isEmpty(); line = line()) {
            int colon = line.indexOf(':');
            headers.computeIfAbsent(
                            line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                            k -> new ArrayList<>())
                    .add(line.substring(colon + 1).trim());
        }
        List<String> length = headers.get("content-length");
        List<String> encoding = headers.get("transfer-encoding");
        if (head || status == 204 || status == 304) {
            return new Response(status, headers, new byte[0], length != null || encoding != null);
        }
        if (length != null) {
            return new Response(
                    status, headers, in.readNBytes(Integer.parseInt(length.get(0))), true);
        }
        if (encoding != null && "chunked".equalsIgnoreCase(encoding.get(0))) {
            return new Response(status, headers, chunked(), true);
        }
        return new Response(status, headers, in.readAllBytes(), false);
    }

    /** The connection itself, for tests that write raw bytes on a kept-alive connection. */
    public Socket socket() {
        return socket;
    }

    public int localPort() {
        return socket.getLocalPort();
    }

    /** True when the server has closed its side: read() sees end of stream within the timeout. */
    public boolean closedByServer(int timeoutMillis) throws IOException {
        socket.setSoTimeout(timeoutMillis);
        try {
            return in.read() == -1;
        } catch (SocketTimeoutException e) {
            return false;
        } catch (IOException e) {
            return true; // reset counts as closed
        }
    }

    private byte[] chunked() throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true) {
            int size = Integer.parseInt(line().split(";")[0].trim(), 16);
            if (size == 0) {
                while (!line().isEmpty()) {
                    // trailers
                }
                return body.toByteArray();
            }
            body.write(in.readNBytes(size));
            line();
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != -1) {
            if (c == '\n') {
                String s = buf.toString(StandardCharsets.ISO_8859_1);
                return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
            }
            buf.write(c);
        }
        return buf.size() == 0 ? null : buf.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
