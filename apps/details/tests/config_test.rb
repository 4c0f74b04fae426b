# frozen_string_literal: true

require_relative "test_helper"

class ConfigTest < DetailsTest
  def parse(env)
    Details::Config.from_env(env)
  end

  def test_defaults_follow_the_catalogue
    c = parse({})
    assert_equal [9080, "0.0.0.0", true, true, 60, 10, 1024, true, 100, 10, false, true, "info"],
                 [c.port, c.listen_address, c.nodelay, c.keepalive, c.keepalive_timeout,
                  c.header_timeout, c.max_connections, c.upstream_keepalive, c.upstream_max_requests,
                  c.shutdown_timeout, c.access_log, c.server_timing, c.log_level]
  end

  def test_booleans_are_case_insensitive_and_ignore_blanks
    { "true" => true, "TRUE" => true, " True\t" => true, "false" => false, "False " => false }.each do |raw, want|
      assert_equal want, parse("HTTP_NODELAY" => raw).nodelay, raw.inspect
      assert_equal want, parse("HTTP_KEEPALIVE" => raw).keepalive, raw.inspect
      assert_equal want, parse("ACCESS_LOG" => raw).access_log, raw.inspect
      assert_equal want, parse("UPSTREAM_KEEPALIVE" => raw).upstream_keepalive, raw.inspect
      assert_equal want, parse("SERVER_TIMING" => raw).server_timing, raw.inspect
    end
  end

  def test_bad_booleans_name_variable_and_value
    ["1", "0", "yes", "no", "", " ", "maybe", "truee"].each do |raw|
      %w[HTTP_NODELAY HTTP_KEEPALIVE ACCESS_LOG UPSTREAM_KEEPALIVE SERVER_TIMING].each do |name|
        err = assert_raises(Details::ConfigError) { parse(name => raw) }
        assert_equal "details: invalid #{name}=#{raw.inspect}: want true or false", err.message
      end
    end
  end

  def test_integers_accept_their_range_ends
    assert_equal 1, parse("PORT" => "1").port
    assert_equal 65_535, parse("PORT" => "65535").port
    assert_equal 3600, parse("HTTP_KEEPALIVE_TIMEOUT_SECONDS" => "3600").keepalive_timeout
    assert_equal 1, parse("HTTP_KEEPALIVE_TIMEOUT_SECONDS" => "1").keepalive_timeout
    assert_equal 1, parse("HTTP_HEADER_TIMEOUT_SECONDS" => "1").header_timeout
    assert_equal 300, parse("HTTP_HEADER_TIMEOUT_SECONDS" => " 300 ").header_timeout
    assert_equal 1, parse("HTTP_MAX_CONNECTIONS" => "1").max_connections
    assert_equal 100_000, parse("HTTP_MAX_CONNECTIONS" => "100000").max_connections
    assert_equal 300, parse("SHUTDOWN_TIMEOUT_SECONDS" => "300").shutdown_timeout
    assert_equal 1_000_000, parse("UPSTREAM_MAX_REQUESTS_PER_CONNECTION" => "1000000").upstream_max_requests
    assert_equal 8080, parse("PORT" => " 8080 ").port
  end

  def test_bad_integers_name_variable_value_and_range
    {
      "PORT" => ["0", "65536", "-1", "", "80a", "8.0", "0x50", "1e3", "+80"],
      "HTTP_KEEPALIVE_TIMEOUT_SECONDS" => ["0", "3601", "1.5", "sixty"],
      "SHUTDOWN_TIMEOUT_SECONDS" => ["0", "301", "2.5", ""],
      "HTTP_HEADER_TIMEOUT_SECONDS" => ["0", "301", "1.5", "", "ten"],
      "HTTP_MAX_CONNECTIONS" => ["0", "100001", "-1", "1e3", ""],
      "UPSTREAM_MAX_REQUESTS_PER_CONNECTION" => %w[0 1000001 many]
    }.each do |name, raws|
      raws.each do |raw|
        err = assert_raises(Details::ConfigError, "#{name}=#{raw.inspect}") { parse(name => raw) }
        assert_match(/\Adetails: invalid #{name}=#{Regexp.escape(raw.inspect)}: want an integer from \d+ to \d+\z/,
                     err.message)
      end
    end
  end

  def test_log_levels
    %w[debug info warn error].each { |l| assert_equal l, parse("LOG_LEVEL" => l.upcase).log_level }
    err = assert_raises(Details::ConfigError) { parse("LOG_LEVEL" => "verbose") }
    assert_equal 'details: invalid LOG_LEVEL="verbose": want debug, info, warn or error', err.message
  end

  def test_listen_address
    assert_equal "127.0.0.1", parse("LISTEN_ADDRESS" => "127.0.0.1").listen_address
    assert_equal "::", parse("LISTEN_ADDRESS" => "::").listen_address
    ["", "a b", "1.2.3.4/8"].each do |raw|
      err = assert_raises(Details::ConfigError) { parse("LISTEN_ADDRESS" => raw) }
      assert_equal "details: invalid LISTEN_ADDRESS=#{raw.inspect}: want an IP address or host name", err.message
    end
  end

  def test_kubernetes_style_details_port_is_ignored
    assert_equal 9080, parse("DETAILS_PORT" => "tcp://10.0.0.1:9080").port
  end
end
