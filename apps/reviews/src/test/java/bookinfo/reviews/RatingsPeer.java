package bookinfo.reviews;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A real HTTP server standing in for ratings; it records what arrives and on which connection. */
public final class RatingsPeer implements AutoCloseable {

    public static final String DEFAULT_BODY =
            "{\"id\":0,\"ratings\":{\"Reviewer1\":5,\"Reviewer2\":4}}";

    public record Arrival(String method, String path, Headers headers, int clientPort) {}

    private final HttpServer server;
    private final ExecutorService executor = Executors.newCachedThreadPool();
    private final List<Arrival> arrivals = new CopyOnWriteArrayList<>();
    private final LinkedBlockingQueue<Arrival> arrived = new LinkedBlockingQueue<>();

    public volatile int status = 200;
    public volatile String body = DEFAULT_BODY;
    public volatile long delayMillis;
    public volatile String serverTiming;

    public RatingsPeer() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(executor);
        server.createContext(
                "/",
                exchange -> {
                    Arrival arrival =
                            new Arrival(
                                    exchange.getRequestMethod(),
                                    exchange.getRequestURI().getPath(),
                                    exchange.getRequestHeaders(),
                                    exchange.getRemoteAddress().getPort());
                    arrivals.add(arrival);
                    arrived.add(arrival);
                    try (exchange) {
                        if (delayMillis > 0) {
                            Thread.sleep(delayMillis);
                        }
                        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
                        exchange.getResponseHeaders().set("Content-Type", "application/json");
                        if (serverTiming != null) {
                            exchange.getResponseHeaders().set("Server-Timing", serverTiming);
                        }
                        exchange.sendResponseHeaders(status, bytes.length);
                        exchange.getResponseBody().write(bytes);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                });
        server.start();
    }

    public int port() {
        return server.getAddress().getPort();
    }

    /** The env that points reviews at this peer. */
    public Map<String, String> env() {
        return Map.of(
                "RATINGS_HOSTNAME", "127.0.0.1", "RATINGS_SERVICE_PORT", Integer.toString(port()));
    }

    public List<Arrival> arrivals() {
        return List.copyOf(arrivals);
    }

    public Arrival awaitArrival(long timeoutMillis) throws InterruptedException {
        return arrived.poll(timeoutMillis, TimeUnit.MILLISECONDS);
    }

    /** Requests per client connection, in the order connections were first seen. */
    public List<Integer> requestsPerConnection() {
        Map<Integer, Integer> byPort = new TreeMap<>();
        List<Integer> order = new ArrayList<>();
        for (Arrival a : arrivals) {
            if (!byPort.containsKey(a.clientPort())) {
                order.add(a.clientPort());
            }
            byPort.merge(a.clientPort(), 1, Integer::sum);
        }
        return order.stream().map(byPort::get).toList();
    }

    public void reset() {
        arrivals.clear();
        arrived.clear();
        status = 200;
        body = DEFAULT_BODY;
        delayMillis = 0;
        serverTiming = null;
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
