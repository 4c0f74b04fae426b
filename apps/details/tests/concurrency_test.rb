# frozen_string_literal: true

require_relative "test_helper"

# WEBrick holds a thread per connection and stops accepting at :MaxClients;
# a benchmark keeps a few hundred keep-alive connections open at once.
class ConcurrencyTest < DetailsTest
  CONNECTIONS = 400

  def test_400_concurrent_keepalive_connections_are_all_served
    # Client and server ends of every connection live in this process.
    soft, hard = Process.getrlimit(:NOFILE)
    Process.setrlimit(:NOFILE, [2 * CONNECTIONS + 200, hard].min, hard) if soft < 2 * CONNECTIONS + 200
    port = start_server.port
    socks = Array.new(CONNECTIONS) { connect(port) }
    socks.each { |s| s.write(request_text("GET", "/health")) }
    statuses = socks.map { |s| read_response(s, timeout: 5).status }
    assert_equal [200] * CONNECTIONS, statuses
    # All still open and usable: none was closed to make room.
    assert_equal 200, http(port, "GET", "/details/9", sock: socks.last).status
  ensure
    socks&.each(&:close)
  end
end
