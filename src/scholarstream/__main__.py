from scholarstream.cli import main

main()
